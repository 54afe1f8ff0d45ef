// bert-train --config NAME: the shipped model-shape presets (configs/*.json) and how a name or path resolves.
#include "../error_of.h"
#include "../scratch_dir.h"
#include "model_config/bert_config.h"
#include "model_config/config_presets.h"
#include "cli/options.h"
#include "tasks/pretraining/bert_train.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <tuple>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSourceConfigs = fs::path(BERTKIT_SOURCE_DIR) / "configs";

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string read(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Changes the working directory for one scope.
struct InDirectory {
  fs::path previous = fs::current_path();
  explicit InDirectory(const fs::path& dir) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(previous); }
};

}  // namespace

TEST_CASE("config presets: bert-base, bert-large, Google's 24 small BERTs and ModernBERT's two, each file in configs/") {
  const auto& presets = bk::bert_config_presets();
  REQUIRE(presets.size() == 28);
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(kSourceConfigs)) files.insert(entry.path().filename().string());
  std::set<std::string> expected;
  for (const auto& name : presets) expected.insert(name + ".json");
  CHECK(files == expected);  // no preset without its file, no file that is not a preset

  auto check_shape = [](const std::string& name, int64_t layers, int64_t hidden, int64_t heads, int64_t ff) {
    CAPTURE(name);
    const bk::BertConfig c = bk::BertConfig::load((kSourceConfigs / (name + ".json")).string());
    c.validate(name);
    CHECK(c.num_hidden_layers == layers);
    CHECK(c.hidden_size == hidden);
    CHECK(c.num_attention_heads == heads);
    CHECK(c.intermediate_size == ff);
    CHECK(c.vocab_size == 30522);
    CHECK(c.max_position_embeddings == 512);
    CHECK(c.type_vocab_size == 2);
    CHECK(c.hidden_act == "gelu");
    CHECK(c.hidden_dropout_prob == 0.1);
    CHECK(c.attention_probs_dropout_prob == 0.1);
    CHECK(c.initializer_range == 0.02);
  };
  check_shape("bert-base", 12, 768, 12, 3072);
  check_shape("bert-large", 24, 1024, 16, 4096);
  size_t small = 0;
  for (int64_t layers : {2, 4, 6, 8, 10, 12})
    for (int64_t hidden : {128, 256, 512, 768}) {
      const std::string name = "bert-L" + std::to_string(layers) + "-H" + std::to_string(hidden);
      CHECK(std::find(presets.begin(), presets.end(), name) != presets.end());
      check_shape(name, layers, hidden, hidden / 64, 4 * hidden);
      ++small;
    }
  CHECK(small == 24);
  // ModernBERT's, with HF's defaults (ModernBertConfig): a global layer every third, window 128, 8,192 positions.
  for (auto [name, layers, hidden, heads, ff] : {std::tuple{"modernbert-base", 22, 768, 12, 1152},
                                                 {"modernbert-large", 28, 1024, 16, 2624}}) {
    CAPTURE(name);
    const bk::BertConfig c = bk::BertConfig::load((kSourceConfigs / (std::string(name) + ".json")).string());
    CHECK(c.is_modernbert());
    CHECK(c.num_hidden_layers == layers);
    CHECK(c.hidden_size == hidden);
    CHECK(c.num_attention_heads == heads);
    CHECK(c.intermediate_size == ff);
    CHECK(c.max_position_embeddings == 8192);
    CHECK(c.modern.local_attention == 128);
    CHECK(c.modern.global_rope_theta == 160000.0);
    CHECK(c.modern.local_rope_theta == 10000.0);
    CHECK(c.attention_probs_dropout_prob == 0.0);
    for (int64_t i = 0; i < layers; ++i) CHECK(c.modern.is_global(i) == (i % 3 == 0));
  }
  // bert-L12-H768 is BERT-base's shape under another name.
  CHECK(bk::BertConfig::load((kSourceConfigs / "bert-L12-H768.json").string()).to_json() ==
        bk::BertConfig::load((kSourceConfigs / "bert-base.json").string()).to_json());
}

TEST_CASE("config presets: where they are looked for") {
  using V = std::vector<fs::path>;
  const V installed = bk::bert_config_preset_dirs("/opt/bk/bin/bert-train");
  REQUIRE(installed.size() >= 2);
  CHECK(installed[0] == fs::path("/opt/bk/share/bertkit/configs"));
  // A backend in PREFIX/libexec/bertkit finds the same directory.
  const V backend = bk::bert_config_preset_dirs("/opt/bk/libexec/bertkit/bert-finetune-torch");
  CHECK(std::find(backend.begin(), backend.end(), fs::path("/opt/bk/share/bertkit/configs")) != backend.end());
  // Nothing else: no path of the machine that built it (a carried bundle finds its own).
  CHECK(installed.size() == 2);
}

TEST_CASE("config presets: a name resolves, an existing path wins, an unknown name lists the presets") {
  bk_test::ScratchDir tmp;
  fs::create_directories(tmp.path / "share" / "bertkit" / "configs");
  fs::create_directories(tmp.path / "empty");
  const std::vector<fs::path> dirs{tmp.path / "empty", tmp.path / "share" / "bertkit" / "configs", kSourceConfigs};

  // The first directory that has the file.
  CHECK(bk::resolve_bert_config("bert-large", dirs) == (kSourceConfigs / "bert-large.json").string());
  write(tmp / "share/bertkit/configs/bert-large.json", "{}");
  CHECK(bk::resolve_bert_config("bert-large", dirs) == tmp / "share/bertkit/configs/bert-large.json");
  // This program's own directories: the build tree's share/bertkit/configs, a copy of the source tree's.
  const std::string own = bk::resolve_bert_config("bert-L2-H128");
  CHECK(fs::path(own).parent_path().filename() == "configs");
  CHECK(read(own) == read(kSourceConfigs / "bert-L2-H128.json"));

  // An existing path is used as it is, named like a preset or not.
  write(tmp / "mine.json", "{}");
  CHECK(bk::resolve_bert_config(tmp / "mine.json", dirs) == tmp / "mine.json");
  write(tmp / "bert-base", "{}");
  {
    InDirectory here(tmp.path);
    CHECK(bk::resolve_bert_config("bert-base", dirs) == "bert-base");
    // A directory of that name (a run's --output-dir, say) is not a config file.
    fs::create_directories(tmp.path / "bert-L4-H256");
    CHECK(bk::resolve_bert_config("bert-L4-H256", dirs) == (kSourceConfigs / "bert-L4-H256.json").string());
  }

  std::string message = bk_test::error_of([&] { bk::resolve_bert_config("bert-huge", dirs); });
  CHECK(message.rfind("--config 'bert-huge': no such file, and not a preset (bert-base, bert-large, bert-L2-H128, ",
                      0) == 0);
  CHECK(message.find("bert-L12-H768, modernbert-base, modernbert-large)") != std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(bk_test::error_of([&] { bk::resolve_bert_config(tmp / "missing.json", dirs); })
            .find("missing.json': no such file, and not a preset") != std::string::npos);
  CHECK(bk_test::error_of([&] { bk::resolve_bert_config("", dirs); }).find("not a preset") != std::string::npos);

  // A preset whose file is nowhere: the directories are named.
  message = bk_test::error_of([&] { bk::resolve_bert_config("bert-base", {tmp.path / "empty"}); });
  CHECK(message.find("bert-base.json is in none of " + (tmp.path / "empty").string()) != std::string::npos);
}

TEST_CASE("config presets: bert-train's --config help names them all") {
  bk::BertTrainConfig config;
  bk::Options options("bert-train", "", "");
  bk::add_bert_train_options(options, config);
  const std::string help = options.help_text();
  CHECK(help.find("bert-base, bert-large,") != std::string::npos);
  CHECK(help.find("bert-L{2,4,6,8,10,12}-H{128,256,512,768},") != std::string::npos);
  CHECK(help.find("modernbert-base, modernbert-large;") != std::string::npos);
  // That brace pattern expands to exactly the preset list.
  std::vector<std::string> expanded{"bert-base", "bert-large"};
  for (int layers : {2, 4, 6, 8, 10, 12})
    for (int hidden : {128, 256, 512, 768})
      expanded.push_back("bert-L" + std::to_string(layers) + "-H" + std::to_string(hidden));
  expanded.insert(expanded.end(), {"modernbert-base", "modernbert-large"});
  CHECK(bk::bert_config_presets() == expanded);
}

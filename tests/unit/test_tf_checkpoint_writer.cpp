// Writing TF1 checkpoints: the LevelDB table writer against the reader, the bundle messages against the bytes
// TensorFlow wrote in the keras-bert-tiny fixture, the HF -> TF names against map_tf_name, and ckpt-convert --to tf
// (torch-free) read back. TensorFlow's own reader is the compat test (tests/compat/test_ckpt_convert_tf.py).
#include <doctest/doctest.h>

#include "ckpt/ckpt_convert.h"
#include "ckpt/convert.h"
#include "ckpt/leveldb_table.h"
#include "ckpt/name_mapping.h"
#include "ckpt/tf_checkpoint.h"
#include "ckpt/tf_checkpoint_writer.h"
#include "util/crc32c.h"
#include "io/input.h"
#include "../error_of.h"
#include "test_support.h"

#include <cstring>
#include <filesystem>
#include <map>

namespace fs = std::filesystem;
using bk_test::error_of;

namespace {

const fs::path kTiny = fs::path(BERTKIT_FIXTURES) / "tf_checkpoint" / "keras-bert-tiny";

std::vector<std::string> dir_listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bk::CkptConvertConfig tf_run(const std::string& input, const std::string& output) {
  bk::CkptConvertConfig cfg;
  cfg.input = input;
  cfg.output = output;
  cfg.to = "tf";
  cfg.quiet = true;
  return cfg;
}

}  // namespace

TEST_CASE("leveldb table writer: many blocks and restart points read back; unsorted keys refused") {
  std::vector<bk::TableEntry> entries{{"", "header"}};
  for (int i = 0; i < 300; ++i)
    entries.push_back({fmt::format("bert/encoder/layer_{:03d}/kernel", i), std::string(size_t(i % 37), char('a' + i % 26))});
  for (size_t block_size : {size_t(1), size_t(200), size_t(4096), size_t(1) << 20}) {
    std::string table = bk::build_leveldb_table(entries, block_size);
    auto back = bk::read_leveldb_table(table, "t");
    REQUIRE(back.size() == entries.size());
    bool same = true;
    for (size_t i = 0; i < back.size(); ++i) same &= back[i].key == entries[i].key && back[i].value == entries[i].value;
    CHECK(same);
  }
  CHECK(bk::read_leveldb_table(bk::build_leveldb_table({}), "empty").empty());
  CHECK(error_of([] { bk::build_leveldb_table({{"b", "1"}, {"a", "2"}}); }).find("sorted") != std::string::npos);
  CHECK(error_of([] { bk::build_leveldb_table({{"a", "1"}, {"a", "2"}}); }).find("unique") != std::string::npos);
}

TEST_CASE("tf checkpoint writer: the bundle messages are the bytes TensorFlow wrote") {
  // keras-bert-tiny was written by TensorFlow: its header and every entry, encoded again from the parsed fields,
  // must come out byte for byte as TensorFlow serialised them.
  auto table = bk::read_leveldb_table(bk::read_file((kTiny / "bert_model.ckpt.index").string()), "tiny");
  REQUIRE(table.size() == 140);
  CHECK(table[0].key.empty());
  CHECK(bk::encode_bundle_header() == table[0].value);
  auto index = bk::parse_tf_checkpoint_index(bk::read_file((kTiny / "bert_model.ckpt.index").string()), "tiny");
  int same = 0;
  for (size_t i = 0; i < index.tensors.size(); ++i) {
    const auto& t = index.tensors[i];
    same += bk::encode_bundle_entry(t.dtype, t.shape, t.offset, t.size, t.masked_crc32c) == table[i + 1].value;
  }
  CHECK(same == 139);
}

TEST_CASE("tf checkpoint writer: the fixture's tensors rewritten give TensorFlow's two files byte for byte") {
  // All 139 tensors (float and the int64 global_step) in TensorFlow's name order: the same data file, and the same
  // index, down to the index block's separator keys.
  bk::TfCheckpointReader reader((kTiny / "bert_model.ckpt").string());
  std::vector<std::string> bytes;
  bytes.reserve(reader.index().tensors.size());
  std::vector<bk::TfTensorView> tensors;
  for (const auto& t : reader.index().tensors) {
    bytes.push_back(reader.read(t));
    tensors.push_back({t.name, t.dtype, t.shape, bytes.back()});
  }
  std::reverse(tensors.begin(), tensors.end());  // any order in: name order out
  auto dir = bk_test::temp_dir("tfw-fixture");
  const std::string prefix = (dir / "bert_model.ckpt").string();
  bk::write_tf_checkpoint(prefix + ".index", bk::tf_data_path(prefix), tensors);
  CHECK(bk::read_file(prefix + ".index") == bk::read_file((kTiny / "bert_model.ckpt.index").string()));
  CHECK(bk::read_file(bk::tf_data_path(prefix)) ==
        bk::read_file((kTiny / "bert_model.ckpt.data-00000-of-00001").string()));
  fs::remove_all(dir);
}

TEST_CASE("tf checkpoint writer: names, shapes, bytes and CRCs read back") {
  auto dir = bk_test::temp_dir("tfw");
  const std::string prefix = (dir / "model.ckpt").string();
  std::vector<float> w(12), b{1.5f, -2.0f, 0.25f};
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.5f - 1.0f;
  int64_t step = 1234567;
  auto view = [](const auto& v) { return std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0])); };
  std::vector<bk::TfTensorView> tensors{
      {"z/kernel", bk::kTfFloat, {3, 4}, view(w)},
      {"a/bias", bk::kTfFloat, {3}, view(b)},
      {"global_step", bk::kTfInt64, {}, std::string_view(reinterpret_cast<const char*>(&step), 8)},
      {"empty", bk::kTfFloat, {0, 4}, std::string_view()}};
  bk::write_tf_checkpoint(prefix + ".index", bk::tf_data_path(prefix), tensors);
  CHECK(dir_listing(dir) == std::vector<std::string>{"model.ckpt.data-00000-of-00001", "model.ckpt.index"});
  CHECK(fs::file_size(bk::tf_data_path(prefix)) == 12 * 4 + 3 * 4 + 8);

  bk::TfCheckpointReader reader(prefix);
  CHECK(reader.index().num_shards == 1);
  std::vector<std::string> names;
  for (const auto& t : reader.index().tensors) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"a/bias", "empty", "global_step", "z/kernel"});
  int64_t offset = 0;
  for (const auto& t : reader.index().tensors) {
    CHECK(t.has_crc32c);
    CHECK(t.offset == offset);  // name order, no gaps
    offset += t.size;
  }
  const auto* k = reader.find("z/kernel");
  REQUIRE(k);
  CHECK(k->dtype == bk::kTfFloat);
  CHECK(k->shape == std::vector<int64_t>{3, 4});
  CHECK(reader.read(*k) == view(w));
  CHECK(bk::crc32c_unmask(k->masked_crc32c) == bk::crc32c(view(w)));
  const auto* s = reader.find("global_step");
  REQUIRE(s);
  CHECK(s->shape.empty());
  CHECK(s->dtype == bk::kTfInt64);
  CHECK(reader.read(*s) == std::string_view(reinterpret_cast<const char*>(&step), 8));
  CHECK(reader.find("empty")->shape == std::vector<int64_t>{0, 4});
  CHECK(reader.read(*reader.find("a/bias")) == view(b));

  // Refused before anything is written.
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto refused = [&](std::vector<bk::TfTensorView> t) {
    return error_of([&] { bk::write_tf_checkpoint(prefix + ".index", bk::tf_data_path(prefix), t); });
  };
  CHECK(refused({{"", bk::kTfFloat, {3}, view(b)}}).find("needs a name") != std::string::npos);
  CHECK(refused({{"x", bk::kTfFloat, {3}, view(b)}, {"x", bk::kTfFloat, {3}, view(b)}}).find("two tensors") != std::string::npos);
  CHECK(refused({{"x", bk::kTfFloat, {4}, view(b)}}).find("12 bytes, but DT_FLOAT [4]") != std::string::npos);
  CHECK(refused({{"x", bk::kTfString, {3}, view(b)}}).find("cannot be written") != std::string::npos);
  CHECK(dir_listing(dir).empty());
  fs::remove_all(dir);
}

TEST_CASE("tf checkpoint writer: the checkpoint state file") {
  CHECK(bk::tf_checkpoint_state("bert_model.ckpt") ==
        "model_checkpoint_path: \"bert_model.ckpt\"\nall_model_checkpoint_paths: \"bert_model.ckpt\"\n");
  CHECK(bk::tf_checkpoint_state("a\"b\\c\xc3\xa9") ==
        "model_checkpoint_path: \"a\\\"b\\\\c\\303\\251\"\nall_model_checkpoint_paths: \"a\\\"b\\\\c\\303\\251\"\n");
}

TEST_CASE("name mapping: HF -> TF is map_tf_name backwards, for every head and the Adam slots") {
  bk::BertConfig config;
  config.num_hidden_layers = 12;
  for (auto head : {bk::BertHead::pretraining, bk::BertHead::span, bk::BertHead::classifier}) {
    auto names = bk::expected_names(bk::bert_tensors(config, head, 3));
    int ok = 0;
    for (const auto& n : names) {
      auto m = bk::map_hf_name(n);
      auto back = bk::map_tf_name(m.tf_name, names);
      ok += back.role == bk::TfRole::kWeight && back.hf_name == n && back.transpose == m.transpose;
      auto v = bk::map_hf_name(n, bk::TfRole::kAdamV);
      auto vback = bk::map_tf_name(v.tf_name, names);
      ok += vback.role == bk::TfRole::kAdamV && vback.hf_name == n && v.tf_name == m.tf_name + "/adam_v";
    }
    CHECK(ok == 2 * static_cast<int>(names.size()));
  }
  CHECK(bk::map_hf_name("bert.encoder.layer.11.attention.self.query.weight").tf_name ==
        "bert/encoder/layer_11/attention/self/query/kernel");
  CHECK(bk::map_hf_name("bert.encoder.layer.11.attention.self.query.weight").transpose);
  CHECK(bk::map_hf_name("bert.embeddings.word_embeddings.weight").tf_name == "bert/embeddings/word_embeddings");
  CHECK(!bk::map_hf_name("bert.embeddings.word_embeddings.weight").transpose);
  CHECK(bk::map_hf_name("cls.predictions.transform.LayerNorm.weight").tf_name == "cls/predictions/transform/LayerNorm/gamma");
  CHECK(bk::map_hf_name("cls.predictions.bias").tf_name == "cls/predictions/output_bias");
  CHECK(bk::map_hf_name("cls.seq_relationship.weight").tf_name == "cls/seq_relationship/output_weights");
  CHECK(!bk::map_hf_name("cls.seq_relationship.weight").transpose);
  CHECK(bk::map_hf_name("qa_outputs.weight").tf_name == "cls/squad/output_weights");
  CHECK(!bk::map_hf_name("qa_outputs.weight").transpose);
  CHECK(bk::map_hf_name("classifier.bias", bk::TfRole::kAdamM).tf_name == "output_bias/adam_m");
  CHECK(bk::map_hf_name("nonsense").tf_name.empty());
  CHECK(bk::map_hf_name("bert.pooler.dense.scale").tf_name.empty());
}

TEST_CASE("ckpt-convert --to tf: the fixture through native and back holds TensorFlow's variables bit for bit") {
  auto dir = bk_test::temp_dir("totf");
  const std::string tiny = (kTiny / "bert_model.ckpt").string();
  const std::string native = (dir / "native").string(), out = (dir / "tf" / "bert_model.ckpt").string();
  bk::CkptConvertConfig to_native = tf_run(tiny, native);
  to_native.to = "native";
  to_native.load.keep_optimizer = true;
  bk::run_ckpt_convert(to_native);
  bk::CkptConvertConfig to_tf = tf_run(native, out);
  to_tf.load.keep_optimizer = true;
  bk::run_ckpt_convert(to_tf);  // tf/ does not exist: made whole and renamed into place
  CHECK(dir_listing(dir / "tf") == std::vector<std::string>{"bert_config.json", "bert_model.ckpt.data-00000-of-00001",
                                                            "bert_model.ckpt.index", "checkpoint", "vocab.txt"});
  CHECK(bk::read_file((dir / "tf" / "vocab.txt").string()) == bk::read_file((kTiny / "vocab.txt").string()));
  CHECK(bk::read_file((dir / "tf" / "checkpoint").string()) == bk::tf_checkpoint_state("bert_model.ckpt"));
  CHECK(bk::BertConfig::load((dir / "tf" / "bert_config.json").string()) ==
        bk::BertConfig::load((kTiny / "bert_config.json").string()));

  // Every variable of the original but global_step, same dtype, shape and bytes.
  bk::TfCheckpointReader original(tiny), ours(out);
  std::map<std::string, const bk::TfTensorInfo*> got;
  for (const auto& t : ours.index().tensors) got[t.name] = &t;
  CHECK(got.size() == 138);
  int same = 0;
  for (const auto& t : original.index().tensors) {
    if (t.name == "global_step") continue;
    auto it = got.find(t.name);
    if (it == got.end()) {
      FAIL_CHECK("missing " << t.name);
      continue;
    }
    same += it->second->dtype == t.dtype && it->second->shape == t.shape && ours.read(*it->second) == original.read(t);
  }
  CHECK(same == 138);

  // An existing checkpoint is refused without -f, and nothing is left behind; -f replaces it.
  auto before = dir_listing(dir / "tf");
  std::string err = error_of([&] { bk::run_ckpt_convert(tf_run(tiny, out)); });
  CHECK(err.find("bert_model.ckpt.index: already exists; use -f/--force") != std::string::npos);
  // A directory as -o stands for DIR/bert_model.ckpt.
  err = error_of([&] { bk::run_ckpt_convert(tf_run(tiny, (dir / "tf").string())); });
  CHECK(err.find("bert_model.ckpt.index: already exists") != std::string::npos);
  bk::CkptConvertConfig forced = tf_run(tiny, (dir / "tf/").string());
  forced.force = true;
  bk::run_ckpt_convert(forced);  // without --keep-optimizer: the model's 46 variables only
  CHECK(dir_listing(dir / "tf") == before);
  CHECK(bk::TfCheckpointReader(out).index().tensors.size() == 46);

  // Into an existing directory beside another model: its bert_config.json is not silently replaced.
  fs::create_directories(dir / "other");
  bk_test::write_bytes(dir / "other" / "bert_config.json", "{\"vocab_size\": 3}");
  bk_test::write_bytes(dir / "other" / "keep.txt", "x");
  err = error_of([&] { bk::run_ckpt_convert(tf_run(tiny, (dir / "other" / "m.ckpt").string())); });
  CHECK(err.find("other/bert_config.json: describes another model; use -f/--force") != std::string::npos);
  CHECK(dir_listing(dir / "other") == std::vector<std::string>{"bert_config.json", "keep.txt"});
  // The same model's config in another spelling (Google's, without layer_norm_eps) is kept as it is.
  fs::copy_file(kTiny / "bert_config.json", dir / "other" / "bert_config.json", fs::copy_options::overwrite_existing);
  bk::run_ckpt_convert(tf_run(tiny, (dir / "other" / "m.ckpt").string()));
  CHECK(bk::read_file((dir / "other" / "bert_config.json").string()) == bk::read_file((kTiny / "bert_config.json").string()));
  CHECK(dir_listing(dir / "other") == std::vector<std::string>{"bert_config.json", "checkpoint", "keep.txt",
                                                               "m.ckpt.data-00000-of-00001", "m.ckpt.index", "vocab.txt"});
  // A second checkpoint into the same directory: `checkpoint` names the first, so -f is needed to repoint it.
  err = error_of([&] { bk::run_ckpt_convert(tf_run(tiny, (dir / "other" / "n.ckpt").string())); });
  CHECK(err.find("other/checkpoint: names another checkpoint as the latest") != std::string::npos);
  CHECK(dir_listing(dir / "other").size() == 6);
  fs::remove_all(dir);
}

TEST_CASE("ckpt-convert --to tf: flags it cannot use are usage errors") {
  auto usage_error_of = [](const bk::CkptConvertConfig& c) -> std::string {
    try {
      c.validate();
    } catch (const bk::UsageError& e) {
      return e.what();
    }
    return "";
  };
  bk::CkptConvertConfig cfg = tf_run("x", "y");
  cfg.pad_vocab = 8;
  CHECK(usage_error_of(cfg).find("tf checkpoints hold the true vocabulary size") != std::string::npos);
  cfg.pad_vocab = 0;
  cfg.lower_case = "true";
  CHECK(usage_error_of(cfg).find("--do-lower-case is not stored") != std::string::npos);
  cfg.lower_case.clear();
  cfg.load.keep_optimizer = true;
  CHECK(usage_error_of(cfg).empty());
  cfg.to = "hf";
  CHECK(usage_error_of(cfg).find("--keep-optimizer needs --to native or tf") != std::string::npos);
}

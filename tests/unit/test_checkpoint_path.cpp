// Where a checkpoint is (ckpt/checkpoint_path.h) and the tokenizer files a model directory carries
// (ckpt/tokenizer_files.h): run directories followed to their latest checkpoint, vocabularies found beside a
// checkpoint, and do_lower_case decided from the real Google vocabularies.
#include "../error_of.h"
#include "../scratch_dir.h"
#include "ckpt/checkpoint_path.h"
#include "ckpt/tokenizer_files.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

const fs::path kVocabs = fs::path(BERTKIT_FIXTURES) / "vocab";

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A complete step directory as the loop leaves it: renamed into place holding model.safetensors.
fs::path make_step(const fs::path& run, int step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%08d", step);
  const fs::path dir = run / "checkpoints" / name;
  write(dir / "model.safetensors", "x");
  return dir;
}

// The number of lines of a vocabulary file (its vocab_size).
int64_t line_count(const fs::path& path) {
  std::ifstream in(path);
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace

TEST_CASE("resolve_checkpoint: a run directory and its checkpoints/ follow latest; a checkpoint stays itself") {
  bk_test::ScratchDir tmp;
  const fs::path run = tmp.path / "run";
  make_step(run, 10);
  const fs::path step20 = make_step(run, 20);
  fs::create_directories(run / "checkpoints" / "step-30.tmp.abc");  // an interrupted save is never chosen
  write(run / "checkpoints" / "latest", "step-00000010\n");  // as the loop writes it: the step directory's name
  CHECK(fs::path(bk::resolve_checkpoint(run.string())).filename() == "step-00000010");
  CHECK(fs::path(bk::resolve_checkpoint((run / "checkpoints").string())).filename() == "step-00000010");
  CHECK(bk::resolve_checkpoint(step20.string()) == step20.string());
  fs::remove(run / "checkpoints" / "latest");
  CHECK(fs::path(bk::resolve_checkpoint(run.string())).filename() == "step-00000020");
  CHECK(bk::checkpoint_step_dirs(run.string()).size() == 2);
}

TEST_CASE("resolve_checkpoint: a run with no complete checkpoint is an error that says so") {
  bk_test::ScratchDir tmp;
  const fs::path run = tmp.path / "run";
  fs::create_directories(run / "checkpoints" / "step-5.tmp.x");
  const std::string message = bk_test::error_of([&] { bk::resolve_checkpoint(run.string()); });
  CHECK(message.find(run.string()) != std::string::npos);
  CHECK(message.find("no complete checkpoint") != std::string::npos);
}

TEST_CASE("vocab_beside_checkpoint: the step directory's vocab.txt first, then the run directory's") {
  bk_test::ScratchDir tmp;
  const fs::path run = tmp.path / "run";
  const fs::path step = make_step(run, 1);
  CHECK(bk::vocab_beside_checkpoint(step.string()).empty());
  write(run / "vocab.txt", "[PAD]\n");
  CHECK(fs::path(bk::vocab_beside_checkpoint(step.string())) == run / "vocab.txt");
  write(step / "vocab.txt", "[PAD]\n");
  CHECK(fs::path(bk::vocab_beside_checkpoint(step.string())) == step / "vocab.txt");
}

TEST_CASE("read_tokenizer_files: Google's cased vocabulary is cased, the uncased one lower-cases") {
  if (!fs::exists(kVocabs)) {
    MESSAGE("fixtures missing, skipped");
    return;
  }
  const fs::path cased = kVocabs / "bert-base-cased-vocab.txt", uncased = kVocabs / "bert-base-uncased-vocab.txt";
  const auto c = bk::read_tokenizer_files(cased.string(), std::nullopt, line_count(cased), 512);
  const auto u = bk::read_tokenizer_files(uncased.string(), std::nullopt, line_count(uncased), 512);
  CHECK_FALSE(c.lower_case);
  CHECK(u.lower_case);
  // An explicit answer wins over the inference.
  CHECK_FALSE(bk::read_tokenizer_files(uncased.string(), false, line_count(uncased), 512).lower_case);
  const auto config = nlohmann::json::parse(bk::tokenizer_config_json(c));
  CHECK(config["tokenizer_class"] == "BertTokenizer");
  CHECK(config["do_lower_case"] == false);
  CHECK(config["mask_token"] == "[MASK]");
  const auto files = bk::tokenizer_file_set(u);
  REQUIRE(files.size() == 3);
  CHECK(files[0].first == "vocab.txt");
  CHECK(files[0].second.size() == fs::file_size(uncased));
}

TEST_CASE("read_tokenizer_files: a tokenizer_config.json beside the vocabulary decides the case") {
  bk_test::ScratchDir tmp;
  const fs::path vocab = tmp.path / "vocab.txt";
  write(vocab, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n");
  CHECK(bk::read_tokenizer_files(vocab.string(), std::nullopt, 6, 128).lower_case);
  write(tmp.path / "tokenizer_config.json", R"({"do_lower_case": false})");
  CHECK_FALSE(bk::read_tokenizer_files(vocab.string(), std::nullopt, 6, 128).lower_case);
  write(tmp.path / "tokenizer_config.json", "{not json");
  CHECK(bk_test::error_of([&] { bk::read_tokenizer_files(vocab.string(), std::nullopt, 6, 128); })
            .find("tokenizer_config.json") != std::string::npos);
}

TEST_CASE("read_tokenizer_files: a vocabulary of the wrong size or without BERT's special tokens is refused") {
  bk_test::ScratchDir tmp;
  const fs::path vocab = tmp.path / "vocab.txt";
  write(vocab, "[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n");
  const std::string size_error = bk_test::error_of([&] { bk::read_tokenizer_files(vocab.string(), true, 9, 128); });
  CHECK(size_error.find("vocab_size is 9") != std::string::npos);
  CHECK(bk_test::error_of([&] { bk::read_tokenizer_files(vocab.string(), true, 5, 128); }).find("[MASK]") !=
        std::string::npos);
}

TEST_CASE("training_tokenizer_files: named, found beside the start checkpoint, or none") {
  bk_test::ScratchDir tmp;
  const fs::path step = make_step(tmp.path / "run", 3);
  CHECK(bk::training_tokenizer_files("", step.string(), 6, 128).empty());
  write(step / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n");
  CHECK(bk::training_tokenizer_files("", step.string(), 6, 128).size() == 3);
  // Found but not fitting (an HF directory padded to a multiple of 8): left behind, not an error.
  CHECK(bk::training_tokenizer_files("", step.string(), 8, 128).empty());
  // Named but not fitting: an error.
  CHECK_FALSE(bk_test::error_of([&] { bk::training_tokenizer_files((step / "vocab.txt").string(), "", 8, 128); })
                  .empty());
}

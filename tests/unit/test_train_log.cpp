// The training log: JSON lines, human lines, appending on resume, TensorBoard scalars.
#include "../error_of.h"
#include "../scratch_dir.h"
#include "train/loop/tensorboard.h"
#include "tfrecord/tfrecord.h"
#include "train/loop/train_log.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

using bk_test::ScratchDir;
namespace fs = std::filesystem;

namespace {


std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string read_stream(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text.push_back(static_cast<char>(c));
  return text;
}

}  // namespace

TEST_CASE("json_number: integers plain, NaN as null, other values read back exactly") {
  CHECK(bk::json_number(3.0) == "3");
  CHECK(bk::json_number(-120.0) == "-120");
  CHECK(bk::json_number(std::nan("")) == "null");
  CHECK(bk::json_number(std::numeric_limits<double>::infinity()) == "null");
  for (double v : {0.1, 6e-3, 1.0 / 3, 1e-12, 123456.789, -2.5e300}) {
    CHECK(nlohmann::json::parse(bk::json_number(v)).get<double>() == v);
  }
}

TEST_CASE("train log: human lines for the first and last steps, at most one per interval between, evaluations always") {
  ScratchDir dir;
  std::FILE* human = std::tmpfile();
  REQUIRE(human != nullptr);
  {
    bk::TrainLogOptions options;
    options.log_file = dir / "train.jsonl";
    options.total_steps = 100;
    options.human = human;
    options.human_every_seconds = 3600;
    options.human_hidden = {"loss_scale"};
    bk::TrainLog log(options);
    for (int64_t step = 10; step <= 90; step += 10) log.log(step, {{"loss", 5.0}, {"loss_scale", 1}});
    log.log(90, {{"eval_accuracy", 0.5}}, /*periodic=*/false);
    log.log(100, {{"loss", 4.0}, {"loss_scale", 1}});
  }
  const std::string text = read_stream(human);
  std::fclose(human);
  CHECK(text.find("step 10/100: loss 5") != std::string::npos);
  CHECK(text.find("step 20/100") == std::string::npos);
  CHECK(text.find("step 90/100: eval_accuracy 0.5") != std::string::npos);
  CHECK(text.find("step 100/100: loss 4") != std::string::npos);
  CHECK(text.find("loss_scale") == std::string::npos);
  CHECK(lines_of(dir / "train.jsonl").size() == 11);  // the file keeps every logged step
}

TEST_CASE("train log: one flushed JSON line per step, a human line, appended on resume") {
  ScratchDir dir;
  std::string path = dir / "train.jsonl";
  std::FILE* human = std::tmpfile();
  REQUIRE(human != nullptr);
  {
    bk::TrainLogOptions options;
    options.log_file = path;
    options.total_steps = 100;
    options.human = human;
    bk::TrainLog log(options);
    log.log(10, {{"loss", 7.5}, {"mlm_loss", 6.75}, {"nsp_loss", 0.75}, {"lr", 6e-3}, {"seq_per_s", 1234.5}});
    // Written and flushed before the log is closed.
    auto lines = lines_of(path);
    REQUIRE(lines.size() == 1);
    auto first = nlohmann::ordered_json::parse(lines[0]);
    std::vector<std::string> keys;
    for (const auto& item : first.items()) keys.push_back(item.key());
    CHECK(keys == std::vector<std::string>{"step", "time", "loss", "mlm_loss", "nsp_loss", "lr", "seq_per_s"});
    CHECK(first["step"] == 10);
    CHECK(first["lr"].get<double>() == 6e-3);
    CHECK(first["seq_per_s"].get<double>() == 1234.5);
    CHECK(std::fabs(first["time"].get<double>() - bk::unix_time_now()) < 60);
    log.log(20, {{"loss", std::nan("")}, {"loss_scale", 65536}});
    log.note(20, "saved checkpoint ckpt/step_20");
  }
  auto lines = lines_of(path);
  REQUIRE(lines.size() == 3);
  auto second = nlohmann::json::parse(lines[1]);
  CHECK(second["loss"].is_null());
  CHECK(second["loss_scale"].is_number_integer());
  CHECK(nlohmann::json::parse(lines[2])["event"] == "saved checkpoint ckpt/step_20");
  std::string text = read_stream(human);
  CHECK(text.find("step 10/100: loss 7.5 mlm_loss 6.75 nsp_loss 0.75 lr 0.006 seq_per_s 1234") != std::string::npos);
  CHECK(text.find("saved checkpoint ckpt/step_20") != std::string::npos);
  std::fclose(human);

  // A new run refuses the existing file; a resumed one appends; --force replaces.
  bk::TrainLogOptions again;
  again.log_file = path;
  again.quiet = true;
  CHECK(bk_test::error_of([&] { bk::TrainLog log(again); }).find(path) != std::string::npos);
  again.append = true;
  { bk::TrainLog(again).log(30, {{"loss", 5.0}}); }
  lines = lines_of(path);
  REQUIRE(lines.size() == 4);
  CHECK(nlohmann::json::parse(lines[3])["step"] == 30);
  again.append = false;
  again.overwrite = true;
  { bk::TrainLog(again).log(1, {{"loss", 9.0}}); }
  CHECK(lines_of(path).size() == 1);
}

TEST_CASE("train log: TensorBoard scalars named train/<field>, one event each") {
  ScratchDir dir;
  bk::TrainLogOptions options;
  options.tensorboard_dir = dir / "tb";
  options.quiet = true;
  {
    bk::TrainLog log(options);
    log.log(5, {{"loss", 2.0}, {"lr", 0.5}});
    log.log(6, {{"loss", 1.0}, {"lr", 0.25}});
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir.path / "tb")) files.push_back(entry.path().string());
  REQUIRE(files.size() == 1);
  CHECK(fs::path(files[0]).filename().string().rfind("events.out.tfevents.", 0) == 0);
  auto records = bk::read_tfrecord_file(files[0]);  // checks both CRCs of every record
  REQUIRE(records.size() == 5);
  // Each scalar record holds its tag and its float bytes (the exact encoding is checked against TensorBoard's
  // own reader in tests/compat/test_tensorboard.py).
  CHECK(records[1].find("train/loss") != std::string::npos);
  CHECK(records[2].find("train/lr") != std::string::npos);
  float half = 0.25f;
  CHECK(records[4].find(std::string(reinterpret_cast<const char*>(&half), 4)) != std::string::npos);
}

// The torch-free parts of the training loop: the training state's JSON, the loop's config checks, the data
// position, and the generic prefetch thread.
#include "../error_of.h"
#include "train/feed/data_position.h"
#include "cli/options.h"
#include "util/prefetcher.h"
#include "train/loop/loop_config.h"
#include "train/loop/train_state.h"
#include "util/error.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <stdexcept>
#include <string>
#include <vector>

TEST_CASE("training state: every key round-trips through trainer_state.json's JSON") {
  bk::TrainingState s;
  s.step = 7;
  s.micro_batch = 14;
  s.schedule_offset = 5;
  s.data_position = {{"epoch", 1}, {"batch", 3}, {"fingerprint", "00000000000000ff"}};
  s.generators = {{"cpu", "AAAA"}};
  s.world_size = 4;
  s.seed = 18446744073709551615ull;  // the largest seed survives (JSON readers of doubles would round it)
  s.max_steps = 100;
  s.train_batch_size = 32;
  s.learning_rate = 6e-3;
  s.warmup_proportion = 0.06;
  s.optimizer = "lamb";
  s.precision = "bf16";
  s.saved_because = "stop";
  const nlohmann::json json = nlohmann::json::parse(s.to_json().dump());
  const bk::TrainingState back = bk::TrainingState::from_json(json, "state.json");
  CHECK(back.to_json() == s.to_json());
  CHECK(back.seed == s.seed);
  CHECK(back.schedule_offset == 5);
  CHECK(back.warmup_proportion == 0.06);
  CHECK(json.size() == 14);
}

TEST_CASE("training state: step and data position are required, the rest defaults") {
  CHECK(bk_test::error_of([] { bk::TrainingState::from_json({{"step", 3}}, "dir/trainer_state.json"); }) ==
        "dir/trainer_state.json: no step or data position");
  const auto s = bk::TrainingState::from_json({{"step", 3}, {"data_position", nlohmann::json::object()}}, "x");
  CHECK(s.step == 3);
  CHECK(s.world_size == 1);
  CHECK(s.micro_batch == 0);
  CHECK(bk_test::error_of([] { bk::TrainingState::from_json({{"step", "three"}, {"data_position", 1}}, "f"); })
            .starts_with("f: "));
}

TEST_CASE("loop config: the defaults pass, each bad value is named by its flag") {
  bk::LoopConfig c;
  c.output_dir = "out";
  c.train_batch_size = 8;
  c.max_steps = 10;
  CHECK_NOTHROW(c.validate());
  auto message = [](bk::LoopConfig bad) {
    try {
      bad.validate();
    } catch (const bk::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto with = [&](auto change) {
    bk::LoopConfig b = c;
    change(b);
    return message(b);
  };
  CHECK(with([](auto& b) { b.gradient_accumulation_steps = 3; }) ==
        "--train-batch-size 8 is not a multiple of --gradient-accumulation-steps 3");
  CHECK(with([](auto& b) { b.max_steps = 0; }) == "--train-batch-size and --max-steps must be positive");
  CHECK(with([](auto& b) { b.log_every = 0; }) == "--log-every must be positive");
  CHECK(with([](auto& b) { b.keep_checkpoints = 0; }) == "--keep-checkpoints must be at least 1");
  CHECK(c.micro_batch_size() == 8);
}

TEST_CASE("loop flags: each kind parsed once into its value, a name outside the list refused naming the flag") {
  auto parsed = [](std::vector<std::string> args, bk::LoopConfig& c) {
    bk::Options options("t", "", "");
    bk::add_loop_options(options, c);
    args.insert(args.begin(), {"t", "--output-dir", "o", "--train-batch-size", "8", "--max-steps", "1"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    try {
      options.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const bk::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  bk::LoopConfig c;
  CHECK(parsed({"--precision", "fp8"}, c) == "--precision must be auto, fp32, bf16 or fp16, got 'fp8'");
  CHECK(!c.precision);  // the default: auto
  CHECK(parsed({"--precision", "fp32"}, c) == "accepted");
  CHECK(c.precision == bk::Precision::fp32);
  CHECK(parsed({"--precision", "auto"}, c) == "accepted");
  CHECK(!c.precision);
  CHECK(parsed({"--lr-scaling", "cube"}, c) == "--lr-scaling must be none, linear or sqrt, got 'cube'");
  CHECK(parsed({"--optimizer", "sgd"}, c) == "--optimizer must be lamb, adamw, stableadamw, acclip or madgrad, got 'sgd'");
  bk::LoopConfig d;
  CHECK(parsed({"--optimizer", "adamw", "--precision", "bf16", "--lr-decay", "linear"}, d) == "accepted");
  CHECK(d.optimizer == bk::OptimizerKind::adamw);
  CHECK(d.precision == bk::Precision::bf16);
  CHECK(d.lr_decay == bk::LrDecay::linear);
  CHECK(d.fused_kernels == bk::FusedKernels::automatic);
}

TEST_CASE("data position: JSON round trip keeps a 64-bit fingerprint; malformed text is an error") {
  const bk::DataPosition p{3, 17, 0xfedcba9876543210ull};
  CHECK(bk::DataPosition::from_json(p.to_json()) == p);
  CHECK_THROWS_AS(bk::DataPosition::from_json("{\"epoch\": 1}"), bk::Error);
}

TEST_CASE("prefetcher: items and end-of-epoch markers in order, with and without a thread") {
  for (size_t depth : {0u, 1u, 4u}) {
    int next = 0;
    bk::Prefetcher<int> ahead(depth, [&](int& out) {
      const int n = next++;
      if (n % 4 == 3) return false;  // every fourth result marks an end of epoch
      out = n;
      return true;
    });
    std::vector<int> seen;
    int item = -1;
    for (int i = 0; i < 8; ++i) seen.push_back(ahead.next(item) ? item : -1);
    CHECK(seen == std::vector<int>{0, 1, 2, -1, 4, 5, 6, -1});
  }
}

TEST_CASE("prefetcher: the producer's error comes out of next(), and again after it") {
  for (size_t depth : {0u, 2u}) {
    int calls = 0;
    bk::Prefetcher<int> ahead(depth, [&](int& out) {
      if (++calls == 2) throw bk::Error("shard_3.hdf5: row 9: bad sample");
      out = calls;
      return true;
    });
    int item = 0;
    CHECK(ahead.next(item));
    CHECK(bk_test::error_of([&] { ahead.next(item); }) == "shard_3.hdf5: row 9: bad sample");
    CHECK(bk_test::error_of([&] { ahead.next(item); }) == "shard_3.hdf5: row 9: bad sample");
  }
}

TEST_CASE("prefetcher: destroying it while the thread waits on a full queue returns") {
  std::atomic<int> produced{0};
  {
    bk::Prefetcher<int> ahead(2, [&](int& out) {
      out = produced++;
      return true;
    });
    while (produced < 3) std::this_thread::yield();
  }
  // The destructor returned (a hang would stop the suite) and joined the thread: nothing is produced after it.
  const int after = produced;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(produced == after);
  CHECK(after <= 4);  // the queue's 2, the one blocked on it, and at most the one being built when stopped
}

TEST_CASE("batch schedule: a linear ramp in whole micro-batches, its running count and the step of a micro-batch") {
  const bk::BatchSchedule plain{4};
  CHECK(plain.micro_batches_at(1) == 4);
  CHECK(plain.micro_batches_through(3) == 12);
  CHECK(plain.step_of(0) == 1);
  CHECK(plain.step_of(11) == 3);
  // From 1 to 8 micro-batches over 10 steps: step t takes 1 + floor(7 (t - 1) / 10).
  const bk::BatchSchedule ramp{8, 1, 10};
  std::vector<int64_t> taken;
  for (int64_t t = 1; t <= 12; ++t) taken.push_back(ramp.micro_batches_at(t));
  CHECK(taken == std::vector<int64_t>{1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 8, 8});
  // The running count and the step of each micro-batch, against a walk over the steps.
  int64_t index = 0;
  for (int64_t t = 1; t <= 40; ++t) {
    for (int64_t k = 0; k < ramp.micro_batches_at(t); ++k, ++index) CHECK(ramp.step_of(index) == t);
    CHECK(ramp.micro_batches_through(t) == index);
  }
  const bk::BatchSchedule long_ramp{4608 / 8, 1, 100000};  // large counts stay exact (no overflow)
  int64_t sum = 0;
  for (int64_t t = 1; t <= 100000; ++t) sum += long_ramp.micro_batches_at(t);
  CHECK(long_ramp.micro_batches_through(100000) == sum);
}

// --cuda-graphs on a CUDA device: bert-train's own loop (run_training_loop with the pretraining task) with its step
// captured after 3 eager ones and replayed, against its eager twin (the same run with every step eager: the same
// staged micro-batches of one shape, the same stream and optimizer path, no capture): the same loss and gradient
// norm at every step (dropout included: torch's generator and bertkit's fused kernels draw each replay's numbers
// from the offsets the eager run uses), with LAMB and AdamW, with and without gradient accumulation. Each case passes
// as skipped (with a message) where no CUDA device is present, as in CI; run `torch_unit_tests -tc='cuda*'` on a GPU.
#include "cuda_cases.h"
#include "test_data_loader_util.h"

#include "tasks/pretraining/pretraining_task.h"
#include "train/loop/graphed_step.h"
#include "train/loop/loop.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace {

struct StepLog {
  double loss = 0, grad_norm = 0;
};

// Trains Google's smallest BERT for `steps` steps on `data` and returns its log's steps.
std::vector<StepLog> train(const std::string& data, const std::string& dir, bool replay, const std::string& optimizer,
                           int64_t accumulation, int64_t steps) {
  bk::PretrainingConfig pc;
  pc.config_path = "bert-L2-H128";  // a preset: no file to find on the device
  pc.train_set = bk::resolve_pretrain_inputs({data});
  pc.max_predictions = 8;
  pc.unpadded = false;
  bk::LoopConfig lc;
  lc.output_dir = dir;
  lc.train_batch_size = 16;
  lc.gradient_accumulation_steps = accumulation;
  lc.max_steps = steps;
  lc.learning_rate = 1e-3;
  lc.optimizer = *bk::find_choice(bk::kOptimizerKinds, optimizer);
  lc.device = "cuda";
  lc.precision = bk::Precision::bf16;
  lc.seed = 7;
  lc.cuda_graphs = true;
  lc.cuda_graph_eager_steps = replay ? 3 : steps;
  lc.tensorboard = false;
  lc.quiet = true;
  bk::PretrainingTask task(pc);
  bk::run_training_loop(lc, task);
  std::vector<StepLog> out;
  std::ifstream log(dir + "/log.jsonl");
  for (std::string line; std::getline(log, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("loss")) out.push_back({j["loss"].get<double>(), j["grad_norm"].get<double>()});
  }
  return out;
}

}  // namespace

TEST_CASE("cuda graphs: a captured and replayed training step takes the eager run's steps") {
  if (!bk_test::cuda_case_runs(bk::cuda_graphs_built(), "this build has no CUDA graphs")) return;
  loader_test::ScratchDir dir;
  const std::string data = dir / "data.hdf5";
  loader_test::write_ids(data, 0, 256);
  for (const std::string optimizer : {"lamb", "adamw"})
    for (const int64_t accumulation : {1, 2}) {
      CAPTURE(optimizer);
      CAPTURE(accumulation);
      const std::string tag = optimizer + std::to_string(accumulation);
      const auto eager = train(data, dir / ("eager-" + tag), false, optimizer, accumulation, 12);
      const auto graphed = train(data, dir / ("graphed-" + tag), true, optimizer, accumulation, 12);
      REQUIRE(eager.size() == 12);
      REQUIRE(graphed.size() == 12);
      for (size_t s = 0; s < eager.size(); ++s) {
        CAPTURE(s + 1);  // steps 1-3 eager in both runs, 4 captured, 5 on replayed
        CHECK(graphed[s].loss == doctest::Approx(eager[s].loss).epsilon(2e-3));
        CHECK(graphed[s].grad_norm == doctest::Approx(eager[s].grad_norm).epsilon(2e-2));
      }
      // Replays learn: the last steps' loss is below the first steps'.
      CHECK(graphed[9].loss + graphed[10].loss + graphed[11].loss < graphed[0].loss + graphed[1].loss + graphed[2].loss);
    }
}

// Internal to the training loop (loop.cpp and the run_*.cpp stages it calls): everything a run holds. Not for
// other callers.
#pragma once

#include "ckpt/tokenizer_files.h"
#include "train/dist/dist.h"
#include "train/dist/dist_sync.h"
#include "train/loop/graphed_step.h"
#include "train/loop/loop_config.h"
#include "train/loop/mlperf_log.h"
#include "train/loop/output_dir.h"
#include "device/precision.h"
#include "train/loop/task.h"
#include "train/loop/train_log.h"
#include "train/optim/grad_scaler.h"
#include "train/optim/optimizer.h"
#include "train/optim/schedule.h"

#include <limits>
#include <memory>
#include <string>

namespace bk {

struct LoopRun {
  LoopConfig cfg;
  TrainingTask* task = nullptr;
  at::Device device{at::kCPU};
  Precision precision = Precision::fp32;  // --precision, resolved on the device
  std::string precision_reason;           // why: ChosenPrecision's reason
  std::unique_ptr<Dist> dist;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<LossScaler> scaler;
  std::unique_ptr<GradientSynchronizer> sync;
  at::ScalarType allreduce_wire = at::ScalarType::Undefined;  // --allreduce-dtype (Undefined: the gradients')
  LrSchedule schedule;
  double learning_rate = 0;          // the peak: --learning-rate, else the task's recipe (TrainingTask::default_learning_rate)
  std::string learning_rate_source;  // where it comes from, for the banner
  double warmup_proportion = kDefaultWarmupProportion;  // --warmup-proportion, the resumed run's or the recipe's
  double lr_scale = 1;
  int64_t step = 0;         // optimizer steps done (skipped fp16 steps included)
  int64_t micro_batch = 0;  // micro-batches consumed
  double best_score = -std::numeric_limits<double>::infinity();
  std::unique_ptr<OutputDirLock> lock;  // rank 0: this run's claim on the output directory
  std::string last_checkpoint;          // rank 0: the output directory's newest checkpoint (step-N); "" before one
  std::unique_ptr<TrainLog> log;  // rank 0 only
  std::unique_ptr<MlperfLog> mlperf;  // rank 0 with --mlperf-log
  int64_t eval_every = 0;             // steps between evaluations (eval_every, or from eval_every_samples)
  int64_t init_start_ms = 0;          // when setup began (MLPerf's init_start)
  NamedFiles tokenizer;               // written into every checkpoint (ckpt/tokenizer_files.h)
  at::Tensor denominators;            // the step's loss denominators over all ranks (float32, on the device)

  bool synced() const { return dist->world() > 1 && !cfg.no_sync_gradients; }
  int64_t global_batch() const { return cfg.train_batch_size * dist->world(); }
  // The samples steps 1..step take over all ranks (fewer than step * global_batch() under a batch-size warm-up).
  int64_t samples_through(int64_t step) const {
    return cfg.batch_schedule().micro_batches_through(step) * cfg.micro_batch_size() * dist->world();
  }
  int64_t schedule_offset = 0;  // optimizer steps from a run before this one (--init-optimizer)
  // The schedule counts this run's updates (NVIDIA's counts the updates applied, so a skipped fp16 step does not
  // advance it); bias correction counts all of the optimizer's.
  int64_t schedule_step() const { return optimizer->steps() - schedule_offset; }
  double lr() const { return schedule.at(schedule_step() + 1) * lr_scale; }
  // The optimizer's parameters in its order: what is broadcast, synchronised and kept from the best worker.
  std::vector<at::Tensor> parameters() const {
    std::vector<at::Tensor> out;
    for (const auto& [name, t] : optimizer->params()) out.push_back(t);
    return out;
  }

  // --cuda-graphs; declared last, so destroyed first: it waits for the graph's last replay.
  std::unique_ptr<GraphedStep> graph;
};

}  // namespace bk

// The one training loop: bert-train's pretraining and every task built on it (task.h) run through it.
//
// One optimizer step, on every rank (step() in loop.cpp):
//   1. take `gradient_accumulation_steps` micro-batches from the task (train_batch_size samples in all) with
//      their counts, and sum each loss term's denominator over the ranks, so that the loss is the mean over the
//      GLOBAL batch: each micro-batch contributes sum / global count per term, and gradients are summed (not
//      averaged) across ranks. N ranks with batch b then compute exactly what one rank with batch N*b does;
//   2. forward (bf16/fp16 autocast when asked) and backward per micro-batch; the gradient all-reduce runs in
//      buckets overlapped with the last micro-batch's backward (GradientSynchronizer);
//   3. fp16: unscale and skip the step on overflow; a NaN/inf loss or a collapsed loss scale stops the run
//      (bk::Error) before anything is saved, so the last checkpoint stays the last good one;
//   4. optimizer step with the scheduled learning rate (clipping or LAMB's pre-normalisation inside it);
//   5. log every log_every steps; checkpoint every checkpoint_every steps, at stop_after and at the end.
// Only rank 0 writes logs and checkpoints. --resume restores the model, the optimizer, the loss scaler, the
// random generators and the task's data position, so a resumed run continues bit for bit.
#pragma once

#include "train/loop/loop_config.h"

namespace bk {

class TrainingTask;

// Runs `task` to config.max_steps (or stop_after); throws bk::Error on bad input or a diverging run.
void run_training_loop(const LoopConfig& config, TrainingTask& task);

}  // namespace bk

// Where a run starts, and taking up where a checkpoint left off: --resume's latest checkpoint (weights, optimizer,
// loss scale, data position, generators), --init-optimizer's moments (NVIDIA's phase 2), and rank 0's claim on the
// output directory before anything in it is read or written.
#pragma once

#include "train/loop/run_plan.h"

namespace bk {

struct LoopRun;

// The checkpoint the run starts from: OUTPUT_DIR's latest with --resume (its step read for --dry-run, which reads
// nothing else of it), else --init-checkpoint. Reads only.
RunStart find_start(const LoopRun& run);

// Rank 0 locks the output directory (one run at a time) and, for a new run, claims it (an earlier run's
// checkpoints are never replaced without --force); then --resume restores the latest checkpoint, found again now
// that no other run can write it, and `start` says where the run stands. False when that run already finished.
bool claim_and_restore(LoopRun& run, RunStart& start);

// --init-optimizer: the optimizer's moments and step count from --init-checkpoint, under this run's own schedule.
void init_optimizer(LoopRun& run);

}  // namespace bk

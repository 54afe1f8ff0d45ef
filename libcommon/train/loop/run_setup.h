// A run's life before its first step, in stages of a screen each (run_setup.cpp): start the process (device,
// process group, TF32, kernels), start the task (model, data, --init-checkpoint), make the update (run_update.h),
// find where the run starts and claim its directory (run_resume.h), open its outputs (plan, logs, MLPerf header).
#pragma once

namespace bk {

struct LoopRun;

// False when there is nothing to train: --dry-run (the plan went to stdout), or --resume of a run that already
// finished (said on stderr).
bool setup_run(LoopRun& run);

}  // namespace bk

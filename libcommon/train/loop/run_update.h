// How a run updates its weights (run_update.cpp): the optimizer (with --init-optimizer's moments), the weights
// broadcast from rank 0, the gradients' synchronisation (and NCCL's warm-up), the fp16 loss scaler, the learning-rate
// schedule and its scaling with the world; --cuda-graphs' requirements checked on what they concern.
#pragma once

namespace bk {

struct LoopRun;

void make_update(LoopRun& run);

}  // namespace bk

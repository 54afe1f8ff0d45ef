// The optimizer factory: picks the algorithm (optimizer.h describes both) from OptimizerConfig::kind.
#pragma once

#include "train/optim/optimizer.h"

#include <memory>

namespace bk {

// named_params: the model's parameters (float32, all on one device, each name once). config.kind picks the
// algorithm; an unknown kind or a bad parameter list throws bk::Error.
std::unique_ptr<Optimizer> make_optimizer(NamedTensors named_params, const OptimizerConfig& config);

// The configuration a training run starts `kind` from: OptimizerConfig's defaults but ACClip's published betas and
// epsilon, StableAdamW's beta2 of 0.98 (ModernBERT's), and torch's fused kernels for AdamW and LAMB's Adam half
// (one pass over each parameter's state, the
// gradients read in place; on BERT-base's parameters on this project's CPU AdamW's step takes 2.8-3.4x less time
// than its multi-tensor passes and LAMB's 1.8x less: bench/optimizer.sh).
OptimizerConfig training_optimizer_config(OptimizerKind kind);

}  // namespace bk

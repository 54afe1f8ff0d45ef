// The optimizer factory: picks the algorithm (optimizer.h describes both) from OptimizerConfig::kind.
#pragma once

#include "train/optim/optimizer.h"

#include <memory>

namespace bk {

// named_params: the model's parameters (float32, all on one device, each name once). config.kind picks the
// algorithm; an unknown kind or a bad parameter list throws bk::Error.
std::unique_ptr<Optimizer> make_optimizer(NamedTensors named_params, const OptimizerConfig& config);

}  // namespace bk

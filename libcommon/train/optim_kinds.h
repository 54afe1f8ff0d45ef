// The two optimizer kinds behind make_optimizer (optim.h has the algorithms and the interface).
#pragma once

#include "train/optim.h"

namespace bk {

std::unique_ptr<Optimizer> make_lamb(NamedTensors named_params, const OptimizerConfig& config);
std::unique_ptr<Optimizer> make_adamw(NamedTensors named_params, const OptimizerConfig& config);

}  // namespace bk

// The optimizer kinds behind make_optimizer (make_optimizer.h); optimizer.h has the algorithms and the
// interface, and knows neither kind.
#pragma once

#include "train/optim/optimizer.h"

namespace bk {

std::unique_ptr<Optimizer> make_lamb(NamedTensors named_params, const OptimizerConfig& config);
std::unique_ptr<Optimizer> make_adamw(NamedTensors named_params, const OptimizerConfig& config);
std::unique_ptr<Optimizer> make_stable_adamw(NamedTensors named_params, const OptimizerConfig& config);
std::unique_ptr<Optimizer> make_acclip(NamedTensors named_params, const OptimizerConfig& config);
std::unique_ptr<Optimizer> make_madgrad(NamedTensors named_params, const OptimizerConfig& config);

}  // namespace bk

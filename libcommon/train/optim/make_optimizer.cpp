#include "train/optim/make_optimizer.h"

#include "train/optim/optimizer_kinds.h"
#include "util/error.h"

namespace bk {

std::unique_ptr<Optimizer> make_optimizer(NamedTensors named_params, const OptimizerConfig& config) {
  if (!(config.beta1 >= 0 && config.beta1 < 1) || !(config.beta2 >= 0 && config.beta2 < 1))
    fail("optimizer: betas must lie in [0, 1), got {} and {}", config.beta1, config.beta2);
  if (config.kind == OptimizerKind::stableadamw && config.fully_decoupled_decay && !(config.max_lr > 0))
    fail("optimizer: fully decoupled weight decay needs the schedule's peak rate, got {}", config.max_lr);
  if (!(config.eps >= 0) || !(config.weight_decay >= 0))
    fail("optimizer: eps and weight decay must be non-negative, got {} and {}", config.eps, config.weight_decay);
  switch (config.kind) {
    case OptimizerKind::lamb: return make_lamb(std::move(named_params), config);
    case OptimizerKind::adamw: return make_adamw(std::move(named_params), config);
    case OptimizerKind::stableadamw: return make_stable_adamw(std::move(named_params), config);
    case OptimizerKind::acclip: return make_acclip(std::move(named_params), config);
    case OptimizerKind::madgrad: return make_madgrad(std::move(named_params), config);
  }
  fail("optimizer: unknown kind");
}

OptimizerConfig training_optimizer_config(OptimizerKind kind) {
  OptimizerConfig c;
  c.kind = kind;
  c.fused = true;
  if (kind == OptimizerKind::acclip) {  // the published defaults
    c.beta2 = 0.99;
    c.eps = 1e-5;
  }
  if (kind == OptimizerKind::stableadamw) c.beta2 = 0.98;  // ModernBERT's (eps 1e-6, as the others')
  return c;
}

}  // namespace bk

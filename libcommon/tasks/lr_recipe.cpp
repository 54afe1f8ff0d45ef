#include "tasks/lr_recipe.h"

#include "util/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace bk {
namespace {

struct Recipe {
  double rate;
  int64_t batch;
  const char* name;
};

// The recipe's rate at the run's global batch, and the banner's account of it.
LearningRate scaled(const Recipe& recipe, int64_t global_batch, const std::string& note = "") {
  const double ratio = static_cast<double>(global_batch) / static_cast<double>(recipe.batch);
  LearningRate lr{recipe.rate * std::sqrt(std::min(1.0, ratio)), fmt::format("{}: {:g} at global batch {}",
                                                                            recipe.name, recipe.rate, recipe.batch)};
  if (ratio < 1) lr.source += fmt::format(", square-root scaled to batch {}", global_batch);
  lr.source += note;
  return lr;
}

}  // namespace

LearningRate pretraining_learning_rate(const BertConfig& model, OptimizerKind optimizer, int64_t global_batch,
                                       int64_t max_length) {
  const bool base_or_larger = model.hidden_size >= 768 && model.num_hidden_layers >= 12;
  if (model.is_modernbert() && (optimizer == OptimizerKind::adamw || optimizer == OptimizerKind::stableadamw)) {
    // ModernBERT's published peak rates are StableAdamW's, the nearest recipe to AdamW's (Warner et al. 2024).
    const bool large = model.hidden_size >= 1024;
    return scaled({large ? 5e-4 : 8e-4, 4608, large ? "ModernBERT-large's recipe (StableAdamW)"
                                                    : "ModernBERT-base's recipe (StableAdamW)"}, global_batch);
  }
  // StableAdamW on BERT: none published; AdamW's, whose step it is where its update clipping does not act.
  const char* stable = optimizer == OptimizerKind::stableadamw ? " (AdamW's: none is published for StableAdamW)" : "";
  // No LAMB rate is published for ModernBERT: BERT's of the same size, said so.
  const char* modern = model.is_modernbert() ? " (none is published for ModernBERT: BERT's of its size)" : "";
  const bool phase2 = max_length > 128;
  // Varlength files record no row width: phase 1's recipe, said so.
  const char* unknown = max_length == 0 ? " (the rows' length is not recorded: phase 1 assumed)" : "";
  switch (optimizer) {
    case OptimizerKind::lamb:
      if (!base_or_larger)
        return scaled({kSmallLambRate, 32, "bertkit's measured LAMB rate for small BERTs"}, global_batch, modern);
      if (phase2) return scaled({4e-3, 32768, "NVIDIA's LAMB phase-2 recipe for BERT-base/large"}, global_batch, modern);
      return scaled({6e-3, 65536, "NVIDIA's LAMB phase-1 recipe for BERT-base/large"}, global_batch,
                    *modern ? modern : unknown);
    case OptimizerKind::adamw:
    case OptimizerKind::stableadamw:
      if (!base_or_larger)
        return scaled({kSmallAdamwRate, 32, "bertkit's measured AdamW rate for small BERTs"}, global_batch, stable);
      return scaled({1e-4, 256, "the BERT paper's Adam recipe"}, global_batch, stable);
    case OptimizerKind::acclip:
    case OptimizerKind::madgrad:
      break;
  }
  usage_fail("--optimizer {} needs --learning-rate: there is no published BERT recipe to take it from",
             choice_name(kOptimizerKinds, optimizer));
}

LearningRate continued_pretraining_learning_rate(OptimizerKind optimizer, int64_t global_batch) {
  const char* note = "; continuing trained weights (--init-checkpoint of a model from elsewhere), 6% warm-up";
  LearningRate lr;
  switch (optimizer) {
    case OptimizerKind::lamb:
      lr = scaled({kContinuedLambRate, 32, "bertkit's continued-pretraining LAMB rate (measured to drift as AdamW's "
                                           "5e-5 does)"}, global_batch, note);
      break;
    case OptimizerKind::adamw:
    case OptimizerKind::stableadamw:
      lr = scaled({5e-5, 32, "google-research/bert run_pretraining.py's rate from --init_checkpoint"}, global_batch,
                  optimizer == OptimizerKind::adamw ? note : "; StableAdamW takes AdamW's" + std::string(note));
      break;
    case OptimizerKind::acclip:
    case OptimizerKind::madgrad:
      usage_fail("--optimizer {} needs --learning-rate: there is no published BERT recipe to take it from",
                 choice_name(kOptimizerKinds, optimizer));
  }
  lr.warmup_proportion = kContinuedWarmupProportion;
  return lr;
}

LearningRate finetuning_learning_rate() {
  return {5e-5, "the default of Google's run_classifier.py and run_squad.py"};
}

}  // namespace bk

// A peak learning rate and where it comes from, as a task's recipe gives it (TrainingTask::default_learning_rate)
// and the start banner prints it. Torch-free.
#pragma once

#include <string>

namespace bk {

// The share of steps in warm-up without --warmup-proportion or --warmup-steps: the recipes' unless they say another.
inline constexpr double kDefaultWarmupProportion = 0.01;

struct LearningRate {
  double value = 0;
  std::string source;  // "--learning-rate", "NVIDIA's LAMB phase-1 recipe for BERT-base/large: ..."
  double warmup_proportion = kDefaultWarmupProportion;  // the recipe's warm-up
};

}  // namespace bk

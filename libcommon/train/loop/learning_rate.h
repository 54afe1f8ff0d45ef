// A peak learning rate and where it comes from, as a task's recipe gives it (TrainingTask::default_learning_rate)
// and the start banner prints it. Torch-free.
#pragma once

#include <string>

namespace bk {

struct LearningRate {
  double value = 0;
  std::string source;  // "--learning-rate", "NVIDIA's LAMB phase-1 recipe for BERT-base/large: ..."
};

}  // namespace bk

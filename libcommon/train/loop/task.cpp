#include "train/loop/task.h"

#include "train/loop/checkpoint.h"

#include <ATen/Tensor.h>

namespace bk {

void TrainingTask::load_init_checkpoint(const std::string& path) {
  Checkpoint init = load_checkpoint(path, /*with_optimizer=*/false);
  load_model_state(init.model, path + "/model.safetensors");
}

}  // namespace bk

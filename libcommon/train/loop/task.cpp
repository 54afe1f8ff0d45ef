#include "train/loop/task.h"

#include "ckpt/convert.h"
#include "model/model_dir.h"
#include "train/loop/checkpoint.h"

#include <ATen/Tensor.h>

namespace bk {

void TrainingTask::load_init_checkpoint(const std::string& path) {
  if (is_torch_save_file(path)) {  // NVIDIA's .pt checkpoints, HF's pytorch_model.bin
    load_model_state(load_model_tensors(path), path);
    return;
  }
  Checkpoint init = load_checkpoint(path, /*with_optimizer=*/false);
  load_model_state(init.model, path + "/model.safetensors");
}

}  // namespace bk

#include "train/loop/task.h"

#include "ckpt/convert.h"
#include "model/model_dir.h"
#include "train/loop/checkpoint.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

namespace bk {

void TrainingTask::load_init_checkpoint(const std::string& path) {
  if (is_torch_save_file(path)) {  // NVIDIA's .pt checkpoints, HF's pytorch_model.bin
    load_model_state(load_weights(path, &model_config()), path);
    return;
  }
  Checkpoint init = read_checkpoint_dir(path, /*with_optimizer=*/false);
  load_model_state(init.model, path + "/model.safetensors");
}

std::string stage_tensors(const std::vector<at::Tensor*>& from_list, const std::vector<at::Tensor*>& to_list,
                          const at::Device& device) {
  for (size_t k = 0; k < from_list.size(); ++k) {
    at::Tensor* from = from_list[k];
    at::Tensor* to = to_list[k];
    if (!from->defined()) continue;
    if (!to->defined()) *to = at::empty(from->sizes(), from->options().device(device).pinned_memory(false));
    if (to->sizes() != from->sizes())
      return fmt::format("{} where the first step had {}", c10::str(from->sizes()), c10::str(to->sizes()));
    to->copy_(*from, /*non_blocking=*/true);
    *from = *to;
  }
  return "";
}

}  // namespace bk

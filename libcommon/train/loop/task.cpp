#include "train/loop/task.h"

#include "ckpt/convert.h"
#include "ckpt/tf_checkpoint.h"
#include "model/model_dir.h"
#include "train/loop/checkpoint.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

namespace bk {

void TrainingTask::load_init_checkpoint(const std::string& path) {
  if (is_torch_save_file(path) || is_tf_checkpoint(path)) {  // NVIDIA's .pt, HF's pytorch_model.bin, Google's TF1
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

void add_batch_counts(StepCounts& counts, const at::Tensor& attention_mask, const TrainingTask& task) {
  const at::Tensor lengths = attention_mask.sum(1).to(at::kLong).cpu().contiguous();
  const int64_t* length = lengths.data_ptr<int64_t>();
  for (int64_t i = 0; i < lengths.numel(); ++i) {
    counts.tokens += length[i];
    counts.real_flops += task.flops_per_sequence(length[i]);
  }
  counts.computed_tokens += attention_mask.numel();
}

void add_sequence_counts(StepCounts& counts, const std::vector<int64_t>& lengths, int64_t computed_tokens,
                         const TrainingTask& task) {
  for (int64_t length : lengths) {
    counts.tokens += length;
    counts.real_flops += task.flops_per_sequence(length);
  }
  counts.computed_tokens += computed_tokens;
}

}  // namespace bk

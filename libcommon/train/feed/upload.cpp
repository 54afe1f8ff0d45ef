#include "train/feed/upload.h"

#include <ATen/ATen.h>

namespace bk {

void upload_async(const std::vector<float>& values, const at::Device& device, at::Tensor& into) {
  at::Tensor host = at::tensor(values, at::kFloat);
  if (device.is_cuda()) host = host.pin_memory();  // freed only once the copy is done (torch's host allocator)
  if (!into.defined()) into = at::empty({host.numel()}, at::TensorOptions().dtype(at::kFloat).device(device));
  into.copy_(host, /*non_blocking=*/true);
}

}  // namespace bk

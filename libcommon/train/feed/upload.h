// Host values onto the training device without making the host wait: what a step sends up besides its batches (the
// loss denominators, the optimizer's learning rate and bias corrections).
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <vector>

namespace bk {

// Copies `values` into `into` (float32 [values.size()] on `device`, made by the first call and kept: a CUDA graph
// reads it where it is) from page-locked memory, queued on the current stream: a copy from pageable memory would wait
// for the device (cudaMemcpy syncs the stream) and cannot be queued between graph replays.
void upload_async(const std::vector<float>& values, const at::Device& device, at::Tensor& into);

}  // namespace bk

// at::Tensor <-> safetensors (ckpt/safetensors.h stays torch-free; this is the one place that bridges them).
#pragma once

#include "ckpt/safetensors.h"

#include <ATen/Tensor.h>

#include <map>
#include <string>

namespace bk {

at::ScalarType torch_dtype_of(StDtype dtype);
// Throws bk::Error naming `what` for a dtype safetensors cannot hold (complex, quantized, ...).
StDtype st_dtype_of(at::ScalarType type, const std::string& what);

// A new CPU tensor holding a copy of the bytes.
at::Tensor to_torch(const StTensor& tensor);

// Every tensor of a file, by name (CPU).
std::map<std::string, at::Tensor> load_safetensors(const std::string& path);

// Writes the tensors (any device, any strides; copied to contiguous CPU memory first) atomically.
void save_safetensors(const std::string& path, const std::map<std::string, at::Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {{"format", "pt"}}, bool overwrite = false);

}  // namespace bk

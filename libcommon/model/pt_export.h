// Writing a state dict as a file Python's torch.load reads: {"model": {name: tensor}}, the layout NVIDIA's and
// MLPerf's PyTorch BERT scripts save and load (checkpoint["model"]). The only LibTorch part of ckpt-convert
// (reading such files needs none: ckpt/torch_save.h).
#pragma once

#include "ckpt/safetensors.h"

#include <string>
#include <vector>

namespace bk {

// Writes atomically (temporary file renamed into place); refuses an existing file unless overwrite.
void write_pt_state_dict(const std::string& path, const std::vector<StTensor>& state_dict, bool overwrite);

}  // namespace bk

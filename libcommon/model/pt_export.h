// torch.save files, written and read: {"model": {name: tensor}}, the layout NVIDIA's and MLPerf's PyTorch BERT
// scripts save and load (checkpoint["model"]). The only LibTorch part of ckpt-convert.
#pragma once

#include "ckpt/safetensors.h"

#include <string>
#include <vector>

namespace bk {

// Writes atomically (temporary file renamed into place); refuses an existing file unless overwrite.
void write_pt_state_dict(const std::string& path, const std::vector<StTensor>& state_dict, bool overwrite);

// Reads a torch.save file (zip layout, as torch >= 1.6 writes it) with LibTorch's unpickler and returns its model
// state dict: the "model" entry of a training checkpoint (NVIDIA's), "state_dict" (Lightning's), or the file itself
// when it is a dict of tensors (HF's pytorch_model.bin). Tensors keep their names and float dtype. bk::Error naming
// the file when it is not such a file, or holds no tensors.
std::vector<StTensor> read_pt_state_dict(const std::string& path);

}  // namespace bk

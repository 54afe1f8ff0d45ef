// torch.save files read without LibTorch or Python (torch-free): the zip layout torch >= 1.6 writes
// (ARCHIVE/data.pkl, a pickle whose tensors are persistent ids of storages; ARCHIVE/data/KEY, each storage's raw
// little-endian bytes, stored uncompressed), and just enough of the pickle machine to rebuild the dicts, lists and
// tensors a training checkpoint holds. Any other object (a DataLoader, an argparse.Namespace) is read as an opaque
// value and skipped, so NVIDIA's {'model': ..., 'optimizer': ..., 'files': ...} checkpoints load whatever else
// they carry.
#pragma once

#include "ckpt/safetensors.h"

#include <string>
#include <vector>

namespace bk {

// The model state dict of a torch.save file: its "model" entry (NVIDIA's and MLPerf's checkpoints), "state_dict"
// (Lightning's) or "module", else the file's own top-level dict (HF's pytorch_model.bin, a bare state dict). Each
// floating-point tensor under its name, in file order, with its dtype (F32, F16, BF16, F64) and its elements in
// row-major order whatever its strides; integer buffers such as position_ids are left out. bk::Error naming the
// file, and the byte of data.pkl where the pickle is at fault.
std::vector<StTensor> read_torch_save_state_dict(const std::string& path);

// Whether `bytes` (a file's first bytes) open a zip archive, as a torch.save file does.
bool looks_like_torch_save(std::string_view bytes);

}  // namespace bk

// read_pt_state_dict (model/pt_export.h): torch.save files into named tensors.
#include "model/pt_export.h"

#include "io/input.h"
#include "model/safetensors_torch.h"
#include "util/error.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cstring>

namespace bk {

namespace {

// The dict of tensors in a loaded object: the object itself, or its "model" / "state_dict" entry.
c10::impl::GenericDict find_state_dict(const c10::IValue& root, const std::string& path) {
  if (!root.isGenericDict()) fail("{}: holds a {}, not a dict of tensors or a checkpoint dict", path, root.tagKind());
  c10::impl::GenericDict dict = root.toGenericDict();
  for (const char* key : {"model", "state_dict", "module"}) {
    auto it = dict.find(c10::IValue(std::string(key)));
    if (it != dict.end() && it->value().isGenericDict()) return it->value().toGenericDict();
  }
  return dict;
}

}  // namespace

std::vector<StTensor> read_pt_state_dict(const std::string& path) {
  const std::string bytes = read_file(path);
  if (bytes.size() < 4 || std::memcmp(bytes.data(), "PK\x03\x04", 4) != 0)
    fail("{}: not a torch.save zip archive (files of torch < 1.6, saved with _use_new_zipfile_serialization=False, "
         "must be re-saved)", path);
  c10::IValue root;
  try {
    root = torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const std::exception& e) {
    // LibTorch's message carries a C++ backtrace after its first line.
    std::string what = e.what();
    fail("{}: LibTorch cannot read it: {}", path, what.substr(0, what.find('\n')));
  }
  std::vector<StTensor> tensors;
  for (const auto& entry : find_state_dict(root, path)) {
    if (!entry.key().isString() || !entry.value().isTensor()) continue;  // step counters, names of files read
    const at::Tensor t = entry.value().toTensor().contiguous().cpu();
    if (!at::isFloatingType(t.scalar_type())) continue;  // buffers such as position_ids
    StTensor out;
    out.name = entry.key().toStringRef();
    out.dtype = st_dtype_of(t.scalar_type(), path + ": " + out.name);
    out.shape = t.sizes().vec();
    out.bytes.assign(static_cast<const char*>(t.data_ptr()), t.nbytes());
    tensors.push_back(std::move(out));
  }
  if (tensors.empty()) fail("{}: holds no floating-point tensors: not a model's state dict", path);
  return tensors;
}

}  // namespace bk

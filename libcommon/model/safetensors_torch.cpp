#include "model/safetensors_torch.h"

#include "util/error.h"

#include <ATen/ATen.h>

#include <vector>

namespace bk {

at::ScalarType torch_dtype_of(StDtype dtype) {
  switch (dtype) {
    case StDtype::F64: return at::kDouble;
    case StDtype::F32: return at::kFloat;
    case StDtype::F16: return at::kHalf;
    case StDtype::BF16: return at::kBFloat16;
    case StDtype::I64: return at::kLong;
    case StDtype::I32: return at::kInt;
    case StDtype::I16: return at::kShort;
    case StDtype::I8: return at::kChar;
    case StDtype::U8: return at::kByte;
    case StDtype::BOOL: return at::kBool;
  }
  fail("unknown safetensors dtype");
}

StDtype st_dtype_of(at::ScalarType type, const std::string& what) {
  switch (type) {
    case at::kDouble: return StDtype::F64;
    case at::kFloat: return StDtype::F32;
    case at::kHalf: return StDtype::F16;
    case at::kBFloat16: return StDtype::BF16;
    case at::kLong: return StDtype::I64;
    case at::kInt: return StDtype::I32;
    case at::kShort: return StDtype::I16;
    case at::kChar: return StDtype::I8;
    case at::kByte: return StDtype::U8;
    case at::kBool: return StDtype::BOOL;
    default: fail("{}: dtype {} cannot be stored in safetensors", what, c10::toString(type));
  }
}

at::Tensor to_torch(const StTensor& tensor) {
  const auto options = at::TensorOptions().dtype(torch_dtype_of(tensor.dtype));
  if (tensor.numel() == 0) return at::empty(tensor.shape, options);
  // from_blob borrows the bytes; clone gives the tensor its own storage.
  return at::from_blob(const_cast<char*>(tensor.bytes.data()), tensor.shape, options).clone();
}

std::map<std::string, at::Tensor> load_safetensors(const std::string& path) {
  SafetensorsReader reader(path);
  std::map<std::string, at::Tensor> out;
  for (const auto& entry : reader.entries()) out.emplace(entry.name, to_torch(reader.read(entry)));
  return out;
}

void save_safetensors(const std::string& path, const std::map<std::string, at::Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata, bool overwrite) {
  std::vector<at::Tensor> keep;  // contiguous CPU copies the views point into
  std::vector<StTensorView> views;
  keep.reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined()) fail("{}: tensor \"{}\" is undefined", path, name);
    const StDtype dtype = st_dtype_of(tensor.scalar_type(), path + ": tensor \"" + name + "\"");
    keep.push_back(tensor.detach().to(at::kCPU).contiguous());
    const at::Tensor& t = keep.back();
    views.push_back({name, dtype, t.sizes().vec(),
                     std::string_view(static_cast<const char*>(t.data_ptr()), static_cast<size_t>(t.nbytes()))});
  }
  write_safetensors(path, views, metadata, overwrite);
}

}  // namespace bk

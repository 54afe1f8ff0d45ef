#include "model/pt_export.h"

#include "cli/error.h"
#include "io/output.h"

#include <ATen/ATen.h>
#include <ATen/core/Dict.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <cstring>

namespace bk {
namespace {

at::ScalarType scalar_type(StDtype dtype) {
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
  return at::kFloat;
}

}  // namespace

void write_pt_state_dict(const std::string& path, const std::vector<StTensor>& state_dict, bool overwrite) {
  // torch.save's zip layout: archive/data.pkl (pickle protocol 2; tensors as persistent ids of storages) and
  // archive/data/N (each storage's bytes). torch::jit::pickle_save would do, but it tags typed dicts with
  // torch.jit._pickle.restore_type_tag, which torch.load(weights_only=True) refuses; an untagged pickle of a
  // string-keyed dict is a plain Python dict in insertion (model) order.
  c10::Dict<std::string, at::Tensor> model;
  for (const auto& t : state_dict) {
    at::Tensor tensor = at::empty(t.shape, at::TensorOptions().dtype(scalar_type(t.dtype)));
    if (static_cast<size_t>(tensor.nbytes()) != t.bytes.size())
      fail("{}: tensor {}: {} bytes for shape of {}", path, t.name, t.bytes.size(), tensor.nbytes());
    std::memcpy(tensor.data_ptr(), t.bytes.data(), t.bytes.size());
    model.insert(t.name, tensor);
  }
  c10::Dict<std::string, c10::Dict<std::string, at::Tensor>> checkpoint;
  checkpoint.insert("model", model);
  std::string pickle;
  torch::jit::Pickler pickler([&](const char* data, size_t size) { pickle.append(data, size); }, nullptr, nullptr,
                              nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(checkpoint);
  pickler.stop();

  Output out(path, overwrite);
  caffe2::serialize::PyTorchStreamWriter zip([&](const void* data, size_t size) {
    out.write(std::string_view(static_cast<const char*>(data), size));
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(), zip);
  zip.writeRecord("byteorder", "little", 6);
  zip.writeEndOfFile();
  out.commit();
}

}  // namespace bk

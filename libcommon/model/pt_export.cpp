#include "model/pt_export.h"

#include "util/error.h"
#include "io/output.h"
#include "model/safetensors_torch.h"

#include <ATen/ATen.h>
#include <ATen/core/Dict.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <cstring>
#include <exception>

namespace bk {

void write_pt_state_dict(const std::string& path, const std::vector<StTensor>& state_dict, bool overwrite) {
  // torch.save's zip layout: archive/data.pkl (pickle protocol 2; tensors as persistent ids of storages) and
  // archive/data/N (each storage's bytes). torch::jit::pickle_save would do, but it tags typed dicts with
  // torch.jit._pickle.restore_type_tag, which torch.load(weights_only=True) refuses; an untagged pickle of a
  // string-keyed dict is a plain Python dict in insertion (model) order.
  c10::Dict<std::string, at::Tensor> model;
  for (const auto& t : state_dict) {
    model.insert(t.name, to_torch(t));
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
  // The zip writer must never see an exception: a write error thrown through it would be thrown again from its
  // destructor (which finishes the archive) while unwinding, and abort the process with the temporary left. The
  // first error is kept, what follows it dropped, and the error raised once the writer is done.
  std::exception_ptr write_error;
  {
    caffe2::serialize::PyTorchStreamWriter zip([&](const void* data, size_t size) {
      if (write_error) return size;
      try {
        out.write(std::string_view(static_cast<const char*>(data), size));
      } catch (...) {
        write_error = std::current_exception();
      }
      return size;
    });
    torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(), zip);
    zip.writeRecord("byteorder", "little", 6);
    zip.writeEndOfFile();
  }
  if (write_error) std::rethrow_exception(write_error);
  out.commit();
}

}  // namespace bk

// libFuzzer target for the torch.save reader (ckpt/torch_save.h: ckpt-convert, bert-train --init-checkpoint,
// bert-eval and bert-finetune on .pt/.pth/.bin files): any bytes must give tensors or a bk::Error, never a crash, a
// sanitizer report or a huge allocation; what is accepted must keep the reader's promises (each tensor holds
// exactly numel x itemsize bytes, in a floating-point dtype, with a non-negative shape).
#include "ckpt/torch_save.h"
#include "fuzz_file.h"
#include "util/error.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = bk_fuzz::write_fuzz_file(data, size, ".pt");
  try {
    for (const bk::StTensor& t : bk::read_torch_save_state_dict(path)) {
      unsigned __int128 numel = 1;
      for (int64_t d : t.shape) {
        if (d < 0) std::abort();
        numel *= static_cast<uint64_t>(d);
      }
      if (t.dtype != bk::StDtype::F32 && t.dtype != bk::StDtype::F16 && t.dtype != bk::StDtype::BF16 &&
          t.dtype != bk::StDtype::F64)
        std::abort();
      if (numel * bk::st_dtype_size(t.dtype) != t.bytes.size()) std::abort();
    }
  } catch (const bk::Error&) {
  }
  return 0;
}

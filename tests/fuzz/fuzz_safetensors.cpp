// libFuzzer target for the safetensors reader (ckpt-convert --from safetensors, bert-train/bert-finetune
// --init-checkpoint DIR/model.safetensors): any bytes must give entries or a bk::Error, never a crash, a
// sanitizer report or a huge allocation; what is accepted must keep the reader's promises (entries tile the data
// section in order, each one numel * itemsize bytes, exactly, without wrapping around).
#include "ckpt/safetensors.h"
#include "fuzz_file.h"
#include "util/error.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = bk_fuzz::write_fuzz_file(data, size, ".safetensors");
  try {
    bk::SafetensorsReader reader(path);
    uint64_t expect = 0;
    for (const auto& e : reader.entries()) {
      if (expect == 0) expect = e.begin;
      if (e.begin != expect || e.end < e.begin || e.end > size) std::abort();
      expect = e.end;
      const int64_t numel = e.numel();
      if (numel < 0) std::abort();
      const unsigned __int128 bytes = static_cast<unsigned __int128>(numel) * bk::st_dtype_size(e.dtype);
      if (bytes != e.end - e.begin) std::abort();
      bk::StTensor t = reader.read(e);
      if (t.bytes.size() != e.end - e.begin) std::abort();
    }
    if (!reader.entries().empty() && expect != size) std::abort();
  } catch (const bk::Error&) {
  }
  return 0;
}

// libFuzzer target for the TF1 checkpoint index parser (LevelDB table + bundle protos): any bytes must give a
// parsed index or a bk::Error, never a crash, a sanitizer report, a hang or a huge allocation; what parses must
// keep the parser's promises (a known dtype, shards in range, byte sizes that match dtype x shape).
#include "ckpt/leveldb_table.h"
#include "ckpt/tf_checkpoint.h"
#include "util/error.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    bk::TfCheckpointIndex index = bk::parse_tf_checkpoint_index(bytes, "fuzz.index");
    for (const auto& t : index.tensors) {
      if (!bk::tf_dtype_name(t.dtype)) std::abort();
      if (t.num_slices == 0 && (t.shard_id < 0 || t.shard_id >= index.num_shards)) std::abort();
      size_t width = bk::tf_dtype_size(t.dtype);
      if (t.num_slices == 0 && width && t.num_elements() * static_cast<int64_t>(width) != t.size) std::abort();
      (void)bk::format_tf_shape(t.shape);
    }
  } catch (const bk::Error&) {
  }
  try {
    (void)bk::snappy_decompress(bytes, "fuzz.snappy");
  } catch (const bk::Error&) {
  }
  return 0;
}

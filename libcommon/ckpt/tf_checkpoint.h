// Reading TensorFlow 1 checkpoints (tensor bundles) without TensorFlow.
//
// PREFIX.index is a LevelDB table (ckpt/leveldb_table.h): key "" holds a BundleHeaderProto {num_shards = 1,
// endianness = 2, version = 3}; every other key is a variable name whose value is a BundleEntryProto {dtype = 1,
// shape = 2 (TensorShapeProto: repeated dim = 2 {size = 1}), shard_id = 3, offset = 4, size = 5,
// crc32c = 6 (fixed32, masked), slices = 7}. PREFIX.data-0000S-of-0000N hold the raw little-endian bytes.
// The index is parsed on its own (listing needs no data files); each tensor read is checked against the
// size and the CRC32C its entry promises.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

// TensorFlow's DataType enum values for the types a BERT checkpoint may hold.
enum TfDtype : int {
  kTfFloat = 1, kTfDouble = 2, kTfInt32 = 3, kTfUint8 = 4, kTfInt16 = 5, kTfInt8 = 6, kTfString = 7,
  kTfInt64 = 9, kTfBool = 10, kTfBfloat16 = 14, kTfUint16 = 17, kTfHalf = 19, kTfUint32 = 22, kTfUint64 = 23,
};

// "DT_FLOAT" etc. for every value TensorFlow defines; nullptr for a value it does not.
const char* tf_dtype_name(int dtype);
// Bytes per element of the fixed-size types we can read (all of TfDtype but DT_STRING); 0 for any other.
size_t tf_dtype_size(int dtype);
// TensorFlow's spelling of a shape: "[30522,128]", "[]" for a scalar.
std::string format_tf_shape(const std::vector<int64_t>& shape);

struct TfTensorInfo {
  std::string name;
  int dtype = 0;
  std::vector<int64_t> shape;
  int32_t shard_id = 0;
  int64_t offset = 0;
  int64_t size = 0;
  uint32_t masked_crc32c = 0;
  bool has_crc32c = false;
  int num_slices = 0;  // partitioned variables (not supported for reading)

  int64_t num_elements() const;
};

struct TfCheckpointIndex {
  int32_t num_shards = 1;
  std::vector<TfTensorInfo> tensors;  // in the table's (byte-wise name) order
};

// Parses the bytes of an .index file. `name` is used in messages. Throws bk::Error on a damaged table, a missing
// or big-endian header, an undefined dtype, a negative dimension, a shard id out of range, or a byte size that
// contradicts dtype x shape — each naming the file and, where there is one, the tensor.
TfCheckpointIndex parse_tf_checkpoint_index(std::string_view bytes, const std::string& name);

// A checkpoint on disk: the index is read when constructed; data shards are opened on first use.
class TfCheckpointReader {
 public:
  // `prefix` is what TF calls the checkpoint ("model.ckpt-1000" for model.ckpt-1000.index); a trailing
  // ".index" is accepted too.
  explicit TfCheckpointReader(std::string prefix);
  ~TfCheckpointReader();
  TfCheckpointReader(const TfCheckpointReader&) = delete;
  TfCheckpointReader& operator=(const TfCheckpointReader&) = delete;

  const std::string& prefix() const { return prefix_; }
  std::string index_path() const { return prefix_ + ".index"; }
  std::string data_path(int32_t shard) const;
  const TfCheckpointIndex& index() const { return index_; }
  const TfTensorInfo* find(std::string_view name) const;

  // The tensor's raw little-endian bytes (size dtype_size x elements), CRC32C verified. Throws bk::Error naming
  // the tensor and the data file: missing shard, data past the end of the shard, checksum mismatch, a dtype
  // that is not fixed-size, a partitioned variable.
  std::string read(const TfTensorInfo& tensor);

 private:
  int shard_fd(int32_t shard, const TfTensorInfo& tensor);

  std::string prefix_;
  TfCheckpointIndex index_;
  std::vector<int> fds_;
};

// True when `prefix`.index exists (so INPUT names a TF1 checkpoint).
bool is_tf_checkpoint(const std::string& prefix);

}  // namespace bk

#include "ckpt/tf_checkpoint.h"

#include "ckpt/byte_cursor.h"
#include "ckpt/leveldb_table.h"
#include "util/error.h"
#include "util/printable.h"
#include "util/crc32c.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

namespace bk {
namespace {

// Protobuf wire format, just what the two bundle messages need. Unknown fields are skipped, as protobuf does.
struct Wire : ByteCursor {
  // Reads a field key; returns the field number and sets wire_type.
  uint64_t key(int& wire_type) {
    uint64_t k = varint();
    wire_type = static_cast<int>(k & 7);
    return k >> 3;
  }
  void skip(int wire_type) {
    switch (wire_type) {
      case 0: varint(); break;
      case 1: take(8); break;
      case 2: take(varint()); break;
      case 5: take(4); break;
      default: bad("unsupported protobuf wire type");
    }
  }
  void expect(int wire_type, int wanted) {
    if (wire_type != wanted) bad("protobuf field has the wrong wire type");
  }
  Wire message() { return Wire{sub(varint())}; }  // the embedded message that follows
  // An int32 field: protobuf writes a negative one as a ten-byte varint; anything else outside int32 is damage,
  // never a value to narrow.
  int32_t int32(std::string_view what) {
    const auto v = static_cast<int64_t>(varint());
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      bad(fmt::format("{} {} is out of range", what, v));
    return static_cast<int32_t>(v);
  }
};

std::vector<int64_t> parse_shape(Wire w) {
  const std::string& where = w.where;
  std::vector<int64_t> shape;
  while (!w.done()) {
    int type;
    uint64_t field = w.key(type);
    if (field == 2) {  // dim
      w.expect(type, 2);
      Wire dim = w.message();
      int64_t size = 0;
      while (!dim.done()) {
        int t;
        if (dim.key(t) == 1) {
          dim.expect(t, 0);
          size = static_cast<int64_t>(dim.varint());
        } else {
          dim.skip(t);
        }
      }
      if (size < 0) fail("{}: dimension {} has unknown size {}", where, shape.size(), size);
      shape.push_back(size);
    } else if (field == 3) {  // unknown_rank
      w.expect(type, 0);
      if (w.varint() != 0) fail("{}: shape of unknown rank", where);
    } else {
      w.skip(type);
    }
  }
  return shape;
}

TfTensorInfo parse_entry(std::string name, std::string_view bytes, const std::string& file) {
  TfTensorInfo t;
  t.name = std::move(name);
  std::string where = fmt::format("{}: tensor {}", file, printable_excerpt(t.name));
  Wire w{{bytes, where}};
  while (!w.done()) {
    int type;
    switch (w.key(type)) {
      case 1: w.expect(type, 0); t.dtype = w.int32("dtype"); break;
      case 2: w.expect(type, 2); t.shape = parse_shape(w.message()); break;
      case 3: w.expect(type, 0); t.shard_id = w.int32("shard id"); break;
      case 4: w.expect(type, 0); t.offset = static_cast<int64_t>(w.varint()); break;
      case 5: w.expect(type, 0); t.size = static_cast<int64_t>(w.varint()); break;
      case 6: {
        w.expect(type, 5);
        std::string_view b = w.take(4);
        std::memcpy(&t.masked_crc32c, b.data(), 4);
        t.has_crc32c = true;
        break;
      }
      case 7: w.expect(type, 2); w.take(w.varint()); ++t.num_slices; break;
      default: w.skip(type);
    }
  }
  if (!tf_dtype_name(t.dtype)) fail("{}: unknown dtype {}", where, t.dtype);
  if (t.offset < 0 || t.size < 0) fail("{}: negative offset or size", where);
  if (t.num_slices == 0) {
    // Product of the dims, refusing overflow, then the byte size the dtype implies.
    int64_t elements = 1;
    for (int64_t d : t.shape) {
      if (d != 0 && elements > std::numeric_limits<int64_t>::max() / d) fail("{}: shape too large", where);
      elements *= d;
    }
    size_t width = tf_dtype_size(t.dtype);
    if (width != 0 && (elements > t.size || elements * static_cast<int64_t>(width) != t.size))
      fail("{}: {} bytes in the data, but {} {} needs {}", where, t.size, tf_dtype_name(t.dtype),
           format_tf_shape(t.shape), elements > t.size ? "more" : std::to_string(elements * int64_t(width)));
  }
  return t;
}

std::string read_whole_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      fail("{}: read error: {}", path, std::strerror(e));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace

const char* tf_dtype_name(int dtype) {
  static const char* const names[] = {
      nullptr, "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8", "DT_INT16", "DT_INT8", "DT_STRING",
      "DT_COMPLEX64", "DT_INT64", "DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16", "DT_QINT16",
      "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF", "DT_RESOURCE", "DT_VARIANT", "DT_UINT32",
      "DT_UINT64", "DT_FLOAT8_E5M2", "DT_FLOAT8_E4M3FN", "DT_FLOAT8_E4M3FNUZ", "DT_FLOAT8_E4M3B11FNUZ",
      "DT_FLOAT8_E5M2FNUZ", "DT_INT4", "DT_UINT4", "DT_INT2", "DT_UINT2", "DT_FLOAT4_E2M1FN"};
  if (dtype < 0 || dtype >= static_cast<int>(std::size(names))) return nullptr;
  return names[dtype];
}

size_t tf_dtype_size(int dtype) {
  switch (dtype) {
    case kTfDouble: case kTfInt64: case kTfUint64: return 8;
    case kTfFloat: case kTfInt32: case kTfUint32: return 4;
    case kTfBfloat16: case kTfHalf: case kTfInt16: case kTfUint16: return 2;
    case kTfInt8: case kTfUint8: case kTfBool: return 1;
    default: return 0;
  }
}

std::string format_tf_shape(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  s += ']';
  return s;
}

int64_t TfTensorInfo::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

TfCheckpointIndex parse_tf_checkpoint_index(std::string_view bytes, const std::string& name) {
  std::vector<TableEntry> entries = read_leveldb_table(bytes, name);
  if (entries.empty() || !entries.front().key.empty())
    fail("{}: no bundle header (the entry with the empty key): not a TF checkpoint index", name);
  TfCheckpointIndex index;
  std::string where = fmt::format("{}: bundle header", name);
  Wire w{{entries.front().value, where}};
  int64_t endianness = 0;
  while (!w.done()) {
    int type;
    switch (w.key(type)) {
      case 1: w.expect(type, 0); index.num_shards = w.int32("shard count"); break;
      case 2: w.expect(type, 0); endianness = static_cast<int64_t>(w.varint()); break;
      default: w.skip(type);
    }
  }
  if (endianness != 0) fail("{}: big-endian checkpoints are not supported", where);
  if (index.num_shards < 1 || index.num_shards > 99999) fail("{}: bad shard count {}", where, index.num_shards);
  index.tensors.reserve(entries.size() - 1);
  for (size_t i = 1; i < entries.size(); ++i) {
    TfTensorInfo t = parse_entry(std::move(entries[i].key), entries[i].value, name);
    if (t.num_slices == 0 && (t.shard_id < 0 || t.shard_id >= index.num_shards))
      fail("{}: tensor {}: shard {} but the checkpoint has {}", name, printable_excerpt(t.name), t.shard_id,
           index.num_shards);
    index.tensors.push_back(std::move(t));
  }
  return index;
}

TfCheckpointReader::TfCheckpointReader(std::string prefix) : prefix_(std::move(prefix)) {
  if (prefix_.size() > 6 && prefix_.ends_with(".index")) prefix_.resize(prefix_.size() - 6);
  index_ = parse_tf_checkpoint_index(read_whole_file(index_path()), index_path());
  fds_.assign(static_cast<size_t>(index_.num_shards), -1);
}

TfCheckpointReader::~TfCheckpointReader() {
  for (int fd : fds_)
    if (fd >= 0) ::close(fd);
}

std::string TfCheckpointReader::data_path(int32_t shard) const {
  return fmt::format("{}.data-{:05d}-of-{:05d}", prefix_, shard, index_.num_shards);
}

const TfTensorInfo* TfCheckpointReader::find(std::string_view name) const {
  for (const auto& t : index_.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

int TfCheckpointReader::shard_fd(int32_t shard, const TfTensorInfo& tensor) {
  int& fd = fds_.at(static_cast<size_t>(shard));
  if (fd < 0) {
    fd = ::open(data_path(shard).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      fail("{}: tensor {}: cannot open its data shard: {}", data_path(shard), printable_excerpt(tensor.name),
           std::strerror(errno));
  }
  return fd;
}

std::string TfCheckpointReader::read(const TfTensorInfo& tensor) {
  if (tensor.num_slices > 0)
    fail("{}: tensor {}: partitioned variables are not supported", index_path(), printable_excerpt(tensor.name));
  if (tf_dtype_size(tensor.dtype) == 0)
    fail("{}: tensor {}: dtype {} cannot be read", index_path(), printable_excerpt(tensor.name),
         tf_dtype_name(tensor.dtype));
  const std::string path = data_path(tensor.shard_id);
  const std::string name = printable_excerpt(tensor.name);
  const int fd = shard_fd(tensor.shard_id, tensor);
  // The index's offset and size are checked against the shard before anything is allocated for them.
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("{}: tensor {}: cannot stat its data shard: {}", path, name, std::strerror(errno));
  if (tensor.offset > st.st_size || tensor.size > st.st_size - tensor.offset)
    fail("{}: tensor {}: bytes {}..{} run past the end of the file ({} bytes): truncated data shard", path, name,
         tensor.offset, static_cast<uint64_t>(tensor.offset) + static_cast<uint64_t>(tensor.size), st.st_size);
  std::string bytes(static_cast<size_t>(tensor.size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, tensor.offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("{}: tensor {}: read error: {}", path, name, std::strerror(errno));
    if (n == 0)
      fail("{}: tensor {}: bytes {}..{} run past the end of the file: truncated data shard", path, name, tensor.offset,
           tensor.offset + tensor.size);
    done += static_cast<size_t>(n);
  }
  if (tensor.has_crc32c) {
    uint32_t stored = crc32c_unmask(tensor.masked_crc32c), actual = crc32c(bytes);
    if (stored != actual)
      fail("{}: tensor {} at byte {}: CRC32C mismatch (index says {:08x}, data has {:08x})", path, name, tensor.offset,
           stored, actual);
  }
  return bytes;
}

bool is_tf_checkpoint(const std::string& prefix) {
  struct stat st;
  std::string p = prefix.ends_with(".index") ? prefix : prefix + ".index";
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace bk

#include "ckpt/tf_checkpoint_writer.h"

#include "ckpt/leveldb_table.h"
#include "util/crc32c.h"
#include "io/output.h"
#include "util/error.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace bk {
namespace {

// Protobuf wire format, just what the two bundle messages need.
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_key(std::string& out, int field, int wire_type) { put_varint(out, uint64_t(field) << 3 | uint64_t(wire_type)); }
void put_varint_field(std::string& out, int field, uint64_t v) {
  if (v == 0) return;  // proto3: a zero scalar is not serialised
  put_key(out, field, 0);
  put_varint(out, v);
}
void put_message_field(std::string& out, int field, const std::string& message) {
  put_key(out, field, 2);
  put_varint(out, message.size());
  out += message;
}

// BundleHeaderProto.Endianness LITTLE, VersionDef.producer: tensor_bundle.proto, kTensorBundleVersion.
constexpr uint64_t kLittleEndian = 0;
constexpr uint64_t kBundleVersion = 1;

}  // namespace

std::string tf_data_path(const std::string& prefix) { return prefix + ".data-00000-of-00001"; }

std::string encode_bundle_header() {
  std::string version;
  put_varint_field(version, 1, kBundleVersion);  // VersionDef.producer (min_consumer 0 is left out)
  std::string out;
  put_varint_field(out, 1, 1);  // num_shards
  put_varint_field(out, 2, kLittleEndian);
  put_message_field(out, 3, version);
  return out;
}

std::string encode_bundle_entry(int dtype, const std::vector<int64_t>& shape, int64_t offset, int64_t size,
                                uint32_t masked_crc32c) {
  std::string shape_message;
  for (int64_t d : shape) {
    std::string dim;
    put_varint_field(dim, 1, static_cast<uint64_t>(d));  // TensorShapeProto.Dim.size
    put_message_field(shape_message, 2, dim);            // TensorShapeProto.dim
  }
  std::string out;
  put_varint_field(out, 1, static_cast<uint64_t>(dtype));
  put_message_field(out, 2, shape_message);  // always present, empty for a scalar
  // shard_id (3) is 0: one shard.
  put_varint_field(out, 4, static_cast<uint64_t>(offset));
  put_varint_field(out, 5, static_cast<uint64_t>(size));
  put_key(out, 6, 5);  // crc32c, fixed32
  out.append(reinterpret_cast<const char*>(&masked_crc32c), 4);
  return out;
}

void write_tf_checkpoint(const std::string& index_path, const std::string& data_path,
                         std::vector<TfTensorView> tensors) {
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TfTensorView& t = tensors[i];
    if (t.name.empty()) fail("{}: a tensor needs a name (the empty key holds the bundle header)", index_path);
    if (i > 0 && tensors[i - 1].name == t.name) fail("{}: two tensors are named {}", index_path, t.name);
    const size_t width = tf_dtype_size(t.dtype);
    if (width == 0) fail("{}: tensor {}: dtype {} cannot be written", index_path, t.name, t.dtype);
    int64_t elements = 1;
    for (int64_t d : t.shape) {
      if (d < 0 || (d != 0 && elements > std::numeric_limits<int64_t>::max() / d))
        fail("{}: tensor {}: bad shape {}", index_path, t.name, format_tf_shape(t.shape));
      elements *= d;
    }
    if (elements > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(width) ||
        static_cast<uint64_t>(elements) * width != t.bytes.size())
      fail("{}: tensor {}: {} bytes, but {} {} needs {} per element", index_path, t.name, t.bytes.size(),
           tf_dtype_name(t.dtype), format_tf_shape(t.shape), width);
  }

  std::vector<TableEntry> entries;
  entries.reserve(tensors.size() + 1);
  entries.push_back({"", encode_bundle_header()});
  Output data(data_path, /*overwrite=*/true);
  int64_t offset = 0;
  for (const TfTensorView& t : tensors) {
    data.write(t.bytes);
    const auto size = static_cast<int64_t>(t.bytes.size());
    entries.push_back({t.name, encode_bundle_entry(t.dtype, t.shape, offset, size, masked_crc32c(t.bytes))});
    offset += size;
  }
  data.commit();
  Output index(index_path, /*overwrite=*/true);
  index.write(build_leveldb_table(entries));
  index.commit();
}

std::string tf_checkpoint_state(const std::string& name) {
  // Protobuf text format string: backslash escapes for quotes and backslashes, octal for other bytes outside
  // printable ASCII (UTF-8 names come out as octal escapes, which the parser turns back into the same bytes).
  std::string quoted = "\"";
  for (unsigned char c : name) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      quoted += fmt::format("\\{:03o}", c);
    } else {
      quoted += static_cast<char>(c);
    }
  }
  quoted += '"';
  return fmt::format("model_checkpoint_path: {}\nall_model_checkpoint_paths: {}\n", quoted, quoted);
}

}  // namespace bk

// Writing TensorFlow 1 checkpoints (tensor bundles) without TensorFlow: what tf.train.load_checkpoint,
// tf.train.list_variables and google-research/bert's init_checkpoint read. The inverse of ckpt/tf_checkpoint.h,
// which documents the two messages.
//
// What is written, as TensorFlow's BundleWriter writes a one-shard bundle:
//   PREFIX.data-00000-of-00001  the tensors' raw little-endian bytes, one after another in name order, no padding.
//   PREFIX.index                a LevelDB table (ckpt/leveldb_table.h, uncompressed blocks) whose key "" holds
//                               BundleHeaderProto {num_shards 1, endianness LITTLE, version {producer 1}} and whose
//                               other keys, sorted byte-wise, are the tensor names, each holding BundleEntryProto
//                               {dtype, shape, shard_id 0, offset, size, crc32c: the masked CRC32C of the bytes}.
//   checkpoint                  (tf_checkpoint_state) the text CheckpointState beside them naming PREFIX's file
//                               name, which is how tf.train.latest_checkpoint(DIR) finds it.
// Protobuf fields are encoded by hand (proto3: fields at their zero value are left out, as TensorFlow's own
// serialisation leaves them out; the shape message is always present, empty for a scalar).
#pragma once

#include "ckpt/tf_checkpoint.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

// One tensor to write; `bytes` (row-major, little-endian) must stay valid while writing.
struct TfTensorView {
  std::string name;
  int dtype = kTfFloat;
  std::vector<int64_t> shape;
  std::string_view bytes;
};

// The data file's name for a one-shard bundle: PREFIX.data-00000-of-00001.
std::string tf_data_path(const std::string& prefix);

// The serialised messages (exposed for tests).
std::string encode_bundle_header();
std::string encode_bundle_entry(int dtype, const std::vector<int64_t>& shape, int64_t offset, int64_t size,
                                uint32_t masked_crc32c);

// Writes the data file at `data_path` and the index at `index_path` (the caller decides where: ckpt-convert
// gives staging names and renames them into place, data before index). Tensors may come in any order; they are
// written in name order. bk::Error, before anything is written, for an empty or repeated name, a dtype that is
// not fixed-size, or a byte count that is not elements x dtype size; on a write error, naming the file.
// Each file goes through bk::Output, so neither is left half-written.
void write_tf_checkpoint(const std::string& index_path, const std::string& data_path,
                         std::vector<TfTensorView> tensors);

// The `checkpoint` file naming `name` (PREFIX's file name, relative to its directory) as the latest checkpoint:
//   model_checkpoint_path: "NAME"
//   all_model_checkpoint_paths: "NAME"
// with NAME escaped as the protobuf text format wants it.
std::string tf_checkpoint_state(const std::string& name);

}  // namespace bk

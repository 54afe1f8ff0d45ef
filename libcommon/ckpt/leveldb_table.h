// Reading a LevelDB-format table (SSTable), the container of a TF1 checkpoint's .index file.
//
// Layout (leveldb doc/table_format.md): data blocks, meta blocks, a metaindex block, an index block, and a
// 48-byte footer (two varint block handles, zero padding, the magic 0xdb4775248b80fb57). Every block is followed
// by a 1-byte compression type (0 none, 1 snappy) and the masked CRC32C of the block plus that byte. A block is a
// run of prefix-compressed entries (shared key bytes, unshared key bytes, value length, both varint32) followed
// by the restart-point offsets and their count (fixed32 each).
//
// The whole file is parsed from memory (an index is small: one entry per tensor). Every structural promise is
// checked, so a damaged or hostile file yields a bk::Error naming it and the byte offset, never a crash.
//
// The writer makes what LevelDB's own TableBuilder makes with its defaults and no compression (as TensorFlow's
// BundleWriter configures it): data blocks closed once they reach `block_size` bytes, a restart point every 16
// entries, an index block with one entry per data block (its key the shortest separator from the next block, a restart
// point at every entry), an empty metaindex block, and the footer. For a TF checkpoint's index this is TensorFlow's
// file byte for byte.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bk {

struct TableEntry {
  std::string key;
  std::string value;
};

// All key/value pairs of the table in key order. `name` is used in error messages. Throws bk::Error on a bad
// footer, a block checksum mismatch, a truncated or malformed block, keys out of order, or unknown compression.
std::vector<TableEntry> read_leveldb_table(std::string_view file, const std::string& name);

// A whole table holding `entries`, which must be sorted by key (byte-wise) without duplicates; bk::Error otherwise.
std::string build_leveldb_table(const std::vector<TableEntry>& entries, size_t block_size = 256 * 1024);

// Snappy raw-format decompression (the only compression LevelDB tables use). Throws bk::Error naming `where`.
std::string snappy_decompress(std::string_view compressed, const std::string& where);

}  // namespace bk

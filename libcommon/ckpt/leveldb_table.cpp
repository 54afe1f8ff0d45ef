#include "ckpt/leveldb_table.h"

#include "ckpt/byte_cursor.h"
#include "util/error.h"
#include "util/crc32c.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace bk {
namespace {

constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;   // two handles of at most 20 bytes each, padding, 8-byte magic
constexpr size_t kTrailerSize = 5;   // compression type byte + masked CRC32C
constexpr uint8_t kNoCompression = 0, kSnappyCompression = 1;
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr bool kCheckBlockCrc = false;  // the fuzzer could never get past a checksum
#else
constexpr bool kCheckBlockCrc = true;
#endif

uint32_t load_u32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // the format is little-endian, as is every machine we build for
}
uint64_t load_u64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

struct BlockHandle {
  uint64_t offset = 0, size = 0;
};

BlockHandle decode_handle(ByteCursor& c) {
  BlockHandle h;
  h.offset = c.varint(64);
  h.size = c.varint(64);
  return h;
}

// The contents of the block at `h`, checksum verified and decompressed.
std::string read_block(std::string_view file, BlockHandle h, const std::string& name, const char* what) {
  if (h.offset > file.size() || h.size > file.size() - h.offset || kTrailerSize > file.size() - h.offset - h.size)
    fail("{}: {} block at byte {} (size {}) runs past the end of the file ({} bytes): truncated", name, what,
         h.offset, h.size, file.size());
  std::string_view contents = file.substr(h.offset, h.size);
  const char* trailer = file.data() + h.offset + h.size;
  uint32_t stored = crc32c_unmask(load_u32(trailer + 1));
  uint32_t actual = crc32c_extend(crc32c(contents), trailer, 1);  // the type byte is covered too
  if (kCheckBlockCrc && stored != actual)
    fail("{}: {} block at byte {}: checksum mismatch (stored {:08x}, computed {:08x})", name, what, h.offset,
         stored, actual);
  auto type = static_cast<uint8_t>(trailer[0]);
  if (type == kNoCompression) return std::string(contents);
  if (type == kSnappyCompression)
    return snappy_decompress(contents, fmt::format("{}: {} block at byte {}", name, what, h.offset));
  fail("{}: {} block at byte {}: unknown compression type {}", name, what, h.offset, type);
}

// Appends the entries of one block to `out`, checking that keys keep increasing.
void decode_block(std::string_view block, uint64_t base, const std::string& name, const char* what,
                  std::vector<TableEntry>& out) {
  ByteCursor c{block, fmt::format("{}: {}", name, what), base};
  if (block.size() < 4) c.bad("block shorter than its restart count");
  uint64_t restarts = load_u32(block.data() + block.size() - 4);
  if (restarts == 0 || restarts > (block.size() - 4) / 4) c.bad("restart count does not fit the block");
  c.bytes = block.substr(0, block.size() - 4 - 4 * restarts);
  std::string key;
  bool first = true;
  while (!c.done()) {
    uint64_t shared = c.varint(32), unshared = c.varint(32), value_size = c.varint(32);
    if (shared > key.size() || (first && shared != 0)) c.bad("shared key prefix longer than the previous key");
    std::string_view tail = c.take(unshared);
    std::string_view value = c.take(value_size);
    key.resize(shared);
    key.append(tail);
    if (!out.empty() && !(out.back().key < key)) c.bad("keys out of order");
    out.push_back({key, std::string(value)});
    first = false;
  }
}

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

// One block being filled: entries prefix-compressed against the previous key, except at restart points, which
// hold the whole key so that a reader can binary-search them.
class BlockBuilder {
 public:
  explicit BlockBuilder(size_t restart_interval) : interval_(restart_interval) {}

  void add(std::string_view key, std::string_view value) {
    size_t shared = 0;
    if (count_ % interval_ == 0) {
      restarts_.push_back(static_cast<uint32_t>(bytes_.size()));
    } else {
      while (shared < last_.size() && shared < key.size() && last_[shared] == key[shared]) ++shared;
    }
    put_varint(bytes_, shared);
    put_varint(bytes_, key.size() - shared);
    put_varint(bytes_, value.size());
    bytes_.append(key.substr(shared));
    bytes_.append(value);
    last_.assign(key);
    ++count_;
  }
  bool empty() const { return count_ == 0; }
  size_t size() const { return bytes_.size() + 4 * restarts_.size() + 4; }
  const std::string& last_key() const { return last_; }

  // The finished block (restart offsets and their count appended); the builder starts over.
  std::string finish() {
    if (restarts_.empty()) restarts_.push_back(0);  // an empty block still has one restart point
    std::string out = std::move(bytes_);
    for (uint32_t r : restarts_) put_u32(out, r);
    put_u32(out, static_cast<uint32_t>(restarts_.size()));
    bytes_.clear();
    restarts_.clear();
    count_ = 0;
    return out;
  }

 private:
  size_t interval_;
  std::string bytes_, last_;
  std::vector<uint32_t> restarts_;
  size_t count_ = 0;
};

// LevelDB's BytewiseComparator::FindShortestSeparator: a short key k with start <= k < limit.
std::string shortest_separator(const std::string& start, const std::string& limit) {
  size_t i = 0;
  while (i < start.size() && i < limit.size() && start[i] == limit[i]) ++i;
  if (i < start.size() && i < limit.size()) {
    const auto byte = static_cast<uint8_t>(start[i]);
    if (byte < 0xff && byte + 1 < static_cast<uint8_t>(limit[i])) {
      std::string out = start.substr(0, i + 1);
      out[i] = static_cast<char>(byte + 1);
      return out;
    }
  }
  return start;
}

// LevelDB's BytewiseComparator::FindShortSuccessor: a short key k >= key.
std::string short_successor(const std::string& key) {
  for (size_t i = 0; i < key.size(); ++i) {
    const auto byte = static_cast<uint8_t>(key[i]);
    if (byte != 0xff) {
      std::string out = key.substr(0, i + 1);
      out[i] = static_cast<char>(byte + 1);
      return out;
    }
  }
  return key;
}

// Appends a block, its type byte (uncompressed) and masked CRC32C to `file`; returns its encoded handle.
std::string append_block(std::string& file, const std::string& block) {
  std::string handle;
  put_varint(handle, file.size());
  put_varint(handle, block.size());
  file += block;
  const char type = static_cast<char>(kNoCompression);
  file.push_back(type);
  put_u32(file, crc32c_mask(crc32c_extend(crc32c(block), &type, 1)));  // the type byte is covered too
  return handle;
}

}  // namespace

std::string build_leveldb_table(const std::vector<TableEntry>& entries, size_t block_size) {
  for (size_t i = 1; i < entries.size(); ++i)
    if (!(entries[i - 1].key < entries[i].key))
      fail("table keys must be unique and sorted: '{}' comes after '{}'", entries[i].key, entries[i - 1].key);
  std::string file;
  BlockBuilder data(16), index(1);
  // A closed block's index entry waits for the next key, so that its key can be the shortest string between the
  // two blocks, as LevelDB's TableBuilder makes it (any key >= the block's last and < the next one's would do).
  std::string pending_handle, pending_last;
  for (const auto& e : entries) {
    if (!pending_handle.empty()) {
      index.add(shortest_separator(pending_last, e.key), pending_handle);
      pending_handle.clear();
    }
    data.add(e.key, e.value);
    if (data.size() >= block_size) {
      pending_last = data.last_key();
      pending_handle = append_block(file, data.finish());
    }
  }
  if (!data.empty()) {
    pending_last = data.last_key();
    pending_handle = append_block(file, data.finish());
  }
  if (!pending_handle.empty()) index.add(short_successor(pending_last), pending_handle);
  std::string footer = append_block(file, BlockBuilder(16).finish());  // metaindex: nothing in it
  footer += append_block(file, index.finish());
  footer.resize(kFooterSize - 8, '\0');  // two handles of at most 20 bytes each, zero-padded
  const uint64_t magic = kTableMagic;
  footer.append(reinterpret_cast<const char*>(&magic), 8);
  return file + footer;
}

std::vector<TableEntry> read_leveldb_table(std::string_view file, const std::string& name) {
  if (file.size() < kFooterSize)
    fail("{}: {} bytes, shorter than a table footer ({} bytes): truncated or not a checkpoint index", name,
         file.size(), kFooterSize);
  uint64_t footer_at = file.size() - kFooterSize;
  if (load_u64(file.data() + file.size() - 8) != kTableMagic)
    fail("{}: no table magic number at byte {}: truncated or not a checkpoint index", name, file.size() - 8);
  ByteCursor footer{file.substr(footer_at, kFooterSize - 8), name + ": footer", footer_at};
  decode_handle(footer);  // the metaindex: TF writes no filter or stats blocks, nothing in it is needed
  BlockHandle index_handle = decode_handle(footer);

  std::string index = read_block(file, index_handle, name, "index");
  std::vector<TableEntry> handles;
  decode_block(index, index_handle.offset, name, "index block", handles);

  std::vector<TableEntry> entries;
  for (const auto& h : handles) {
    ByteCursor hc{h.value, name + ": index block entry", index_handle.offset};
    BlockHandle data_handle = decode_handle(hc);
    std::string block = read_block(file, data_handle, name, "data");
    size_t before = entries.size();
    decode_block(block, data_handle.offset, name, "data block", entries);
    // The index key separates blocks: every key of this block is <= it.
    if (entries.size() > before && h.key < entries.back().key)
      fail("{}: data block at byte {} holds keys past its index entry", name, data_handle.offset);
  }
  return entries;
}

std::string snappy_decompress(std::string_view compressed, const std::string& where) {
  ByteCursor c{compressed, where + ": snappy stream"};
  uint64_t length = c.varint(32);
  std::string out;
  // The claimed length bounds the output; a hostile header cannot make us reserve more than 256x the input.
  if (length > compressed.size() * 256 + 64) c.bad("declared length impossible for the input size");
  out.reserve(length);
  while (!c.done()) {
    auto tag = static_cast<uint8_t>(c.take(1)[0]);
    uint64_t len = 0, offset = 0;
    switch (tag & 3) {
      case 0: {  // literal; lengths of 60+ are spelled out in 1-4 following bytes
        len = tag >> 2;
        if (len >= 60) {
          std::string_view extra = c.take(len - 59);
          len = 0;
          for (size_t i = extra.size(); i-- > 0;) len = (len << 8) | static_cast<uint8_t>(extra[i]);
        }
        len += 1;
        if (len > length - out.size()) c.bad("literal longer than the declared length");
        out.append(c.take(len));
        continue;
      }
      case 1: {
        len = 4 + ((tag >> 2) & 7);
        offset = (uint64_t(tag >> 5) << 8) | static_cast<uint8_t>(c.take(1)[0]);
        break;
      }
      case 2: {
        std::string_view b = c.take(2);
        len = (tag >> 2) + 1;
        offset = static_cast<uint8_t>(b[0]) | (uint64_t(static_cast<uint8_t>(b[1])) << 8);
        break;
      }
      default: {
        std::string_view b = c.take(4);
        len = (tag >> 2) + 1;
        offset = load_u32(b.data());
      }
    }
    if (offset == 0 || offset > out.size()) c.bad("copy offset outside the output");
    if (len > length - out.size()) c.bad("copy longer than the declared length");
    size_t from = out.size() - offset;
    for (uint64_t i = 0; i < len; ++i) out.push_back(out[from + i]);  // may overlap itself, byte by byte
  }
  if (out.size() != length) c.bad("output shorter than the declared length");
  return out;
}

}  // namespace bk

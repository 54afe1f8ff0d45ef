// A cursor over bytes for the checkpoint readers (LevelDB table blocks, snappy streams, the protobuf messages of
// a TF bundle index): varints and byte runs that fail with what is being read and the absolute offset, instead
// of reading past the end.
#pragma once

#include "util/error.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace bk {

struct ByteCursor {
  std::string_view bytes;
  std::string where;  // "FILE: what is read", for messages
  uint64_t base = 0;  // offset of bytes[0] in the file, for messages
  size_t pos = 0;

  [[noreturn]] void bad(std::string_view problem) const { fail("{} at byte {}: {}", where, base + pos, problem); }
  bool done() const { return pos >= bytes.size(); }
  // A base-128 varint of at most max_bits bits (32 or 64).
  uint64_t varint(int max_bits = 64) {
    uint64_t v = 0;
    for (int shift = 0; shift < max_bits; shift += 7) {
      if (pos >= bytes.size()) bad("truncated varint");
      const auto b = static_cast<uint8_t>(bytes[pos++]);
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        if (max_bits == 32 && v > UINT32_MAX) bad("varint32 out of range");
        return v;
      }
    }
    bad("varint too long");
  }
  std::string_view take(uint64_t n) {
    if (n > bytes.size() - pos) bad("truncated (a field runs past the end)");
    const auto s = bytes.substr(pos, n);
    pos += n;
    return s;
  }
  // A cursor over the next n bytes, with offsets still counted from the file's start.
  ByteCursor sub(uint64_t n) {
    const uint64_t at = base + pos;
    return ByteCursor{take(n), where, at};
  }
};

}  // namespace bk

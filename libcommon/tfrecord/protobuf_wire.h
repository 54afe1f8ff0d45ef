// The two protocol-buffer wire primitives every hand-written encoder here needs (tf.train.Example, TensorBoard
// events, pretraining records): base-128 varints and their sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace bk {

inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Writes v at p (varint_size(v) bytes) and returns the end.
inline char* put_varint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

}  // namespace bk

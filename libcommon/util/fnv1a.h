// The 64-bit FNV-1a hash (Fowler, Noll, Vo): a stable, documented hash of bytes for identities that files record
// (a vocabulary's stamp, the sample ids of unmasked instances), the same on every machine and in Python.
#pragma once

#include <cstdint>
#include <string_view>

namespace bk {

inline constexpr uint64_t kFnv1aOffset = 0xcbf29ce484222325ull;

// Continues `hash` over `bytes` (start from kFnv1aOffset).
inline uint64_t fnv1a64(std::string_view bytes, uint64_t hash = kFnv1aOffset) {
  for (unsigned char c : bytes) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

}  // namespace bk

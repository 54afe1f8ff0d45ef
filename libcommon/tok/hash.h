// A small, fast hash for short byte strings (vocabulary pieces and words are rarely longer than 20 bytes).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace bk::tok {

inline uint64_t hash_bytes(const char* p, size_t n) {
  constexpr uint64_t k1 = 0x9E3779B97F4A7C15ull, k2 = 0xC2B2AE3D27D4EB4Full;
  uint64_t h = k1 ^ (n * k2);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = std::rotl(h ^ (w * k2), 31) * k1;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = std::rotl(h ^ (w * k2), 31) * k1;
  }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return h;
}

}  // namespace bk::tok

// A small, fast hash and an equality test for short byte strings (vocabulary pieces and words are rarely
// longer than 20 bytes). Every length is read with fixed-size loads (overlapping ones for the tail), so there is
// no byte-by-byte loop and no library call, and nothing outside [p, p + n) is read.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace bk::detail {

inline uint64_t hash_bytes(const char* p, size_t n) {
  constexpr uint64_t k1 = 0x9E3779B97F4A7C15ull, k2 = 0xC2B2AE3D27D4EB4Full;
  uint64_t h = k1 ^ (n * k2);
  auto mix = [&h](uint64_t w) { h = std::rotl(h ^ (w * k2), 31) * k1; };
  auto load64 = [](const char* at) {
    uint64_t w;
    std::memcpy(&w, at, 8);
    return w;
  };
  auto load32 = [](const char* at) {
    uint32_t w;
    std::memcpy(&w, at, 4);
    return uint64_t{w};
  };
  if (n >= 8) {
    const char* end = p + n;
    for (; end - p > 8; p += 8) mix(load64(p));
    mix(load64(end - 8));  // the last 8 bytes (overlapping the previous block unless n is a multiple of 8)
  } else if (n >= 4) {
    mix(load32(p) | load32(p + n - 4) << 32);
  } else if (n > 0) {
    const auto byte = [p](size_t i) { return uint64_t{static_cast<unsigned char>(p[i])}; };
    mix(byte(0) | byte(n / 2) << 8 | byte(n - 1) << 16);
  }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return h;
}

// a[0..n) == b[0..n).
inline bool bytes_equal(const char* a, const char* b, size_t n) {
  uint64_t x, y;
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&x, a + i, 8);
      std::memcpy(&y, b + i, 8);
      if (x != y) return false;
    }
    std::memcpy(&x, a + n - 8, 8);
    std::memcpy(&y, b + n - 8, 8);
    return x == y;
  }
  if (n >= 4) {
    uint32_t x0, y0, x1, y1;
    std::memcpy(&x0, a, 4);
    std::memcpy(&y0, b, 4);
    std::memcpy(&x1, a + n - 4, 4);
    std::memcpy(&y1, b + n - 4, 4);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace bk::detail

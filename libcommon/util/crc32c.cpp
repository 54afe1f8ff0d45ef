#include "util/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define BK_CRC32C_X86 1
#endif

namespace bk {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // reflected 0x1EDC6F41

// tables[k][b]: the CRC contribution of byte b followed by k zero bytes; slicing-by-8 folds 8 input
// bytes per step with 8 independent lookups instead of 8 dependent ones.
constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1) ? kPolynomial : 0);
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k)
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  return t;
}
constexpr auto kTables = make_tables();

inline uint64_t load_le64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  while (size >= 8) {
    uint64_t word = load_le64(p) ^ c;
    c = kTables[7][word & 0xff] ^ kTables[6][(word >> 8) & 0xff] ^ kTables[5][(word >> 16) & 0xff] ^
        kTables[4][(word >> 24) & 0xff] ^ kTables[3][(word >> 32) & 0xff] ^ kTables[2][(word >> 40) & 0xff] ^
        kTables[1][(word >> 48) & 0xff] ^ kTables[0][word >> 56];
    p += 8;
    size -= 8;
  }
  while (size--) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xff];
  return ~c;
}

#ifdef BK_CRC32C_X86
// Compiled for SSE4.2 alone; only ever called after the run-time CPU check below.
__attribute__((target("sse4.2"))) uint32_t crc32c_extend_hardware(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  while (size > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(c, *p++);
    --size;
  }
#if defined(__x86_64__)
  uint64_t c64 = c;
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c64 = _mm_crc32_u64(c64, word);
    p += 8;
    size -= 8;
  }
  c = static_cast<uint32_t>(c64);
#endif
  while (size >= 4) {
    uint32_t word;
    std::memcpy(&word, p, 4);
    c = _mm_crc32_u32(c, word);
    p += 4;
    size -= 4;
  }
  while (size--) c = _mm_crc32_u8(c, *p++);
  return ~c;
}

bool crc32c_hardware_available() {
  // __builtin_cpu_init makes the check safe even if the first call comes from a static initialiser.
  static const bool available = (__builtin_cpu_init(), __builtin_cpu_supports("sse4.2"));
  return available;
}
#else
uint32_t crc32c_extend_hardware(uint32_t crc, const void* data, size_t size) {
  return crc32c_extend_portable(crc, data, size);
}
bool crc32c_hardware_available() { return false; }
#endif

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  static const bool hardware = crc32c_hardware_available();
  return hardware ? crc32c_extend_hardware(crc, data, size) : crc32c_extend_portable(crc, data, size);
}

}  // namespace bk

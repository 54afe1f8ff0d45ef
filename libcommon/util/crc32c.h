// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TFRecord files and TF checkpoints.
//
// crc32c() picks the SSE4.2 `crc32` instruction when the CPU has it (checked once at run time, so the
// binary stays generic x86-64) and a slicing-by-8 table otherwise. Both paths are exposed so tests can
// check that they agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace bk {

// Continues a CRC: crc32c_extend(crc32c_extend(0, a), b) == crc32c(a + b). Start with 0.
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);

inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }
inline uint32_t crc32c(std::string_view bytes) { return crc32c_extend(0, bytes.data(), bytes.size()); }

// The individual implementations (same contract as crc32c_extend).
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size);
uint32_t crc32c_extend_hardware(uint32_t crc, const void* data, size_t size);  // only if crc32c_hardware_available()
bool crc32c_hardware_available();

// TFRecord/LevelDB masking: a CRC stored next to data that itself contains CRCs is rotated and offset,
// so that the CRC of a string that embeds its own CRC is not trivially related to it.
constexpr uint32_t kCrc32cMaskDelta = 0xa282ead8u;
constexpr uint32_t crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrc32cMaskDelta; }
constexpr uint32_t crc32c_unmask(uint32_t masked) {
  uint32_t rot = masked - kCrc32cMaskDelta;
  return (rot >> 17) | (rot << 15);
}
inline uint32_t masked_crc32c(std::string_view bytes) { return crc32c_mask(crc32c(bytes)); }

}  // namespace bk

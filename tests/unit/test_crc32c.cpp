#include <doctest/doctest.h>

#include "util/crc32c.h"

#include <random>
#include <string>
#include <vector>

namespace {
std::string bytes_of(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}
std::string repeated(size_t n, int (*f)(size_t)) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(f(i)));
  return s;
}
}  // namespace

// Published CRC-32C check values: the CRC catalogue's check value for "123456789", and RFC 3720
// (iSCSI) appendix B.4, whose CRCs are printed there as the little-endian bytes of the value.
TEST_CASE("crc32c: published vectors, both implementations") {
  struct Vector {
    std::string data;
    uint32_t crc;
  };
  const std::vector<Vector> vectors = {
      {"", 0x00000000u},
      {"123456789", 0xE3069283u},
      {std::string(32, '\0'), 0x8A9136AAu},
      {std::string(32, '\xff'), 0x62A8AB43u},
      {repeated(32, [](size_t i) { return static_cast<int>(i); }), 0x46DD794Eu},
      {repeated(32, [](size_t i) { return static_cast<int>(31 - i); }), 0x113FDB5Cu},
      // RFC 3720 B.4: an iSCSI SCSI Read (10) command PDU.
      {bytes_of({0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
                 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}),
       0xD9963A56u},
  };
  for (const auto& v : vectors) {
    CAPTURE(v.data.size());
    CHECK(bk::crc32c(v.data) == v.crc);
    CHECK(bk::crc32c_extend_portable(0, v.data.data(), v.data.size()) == v.crc);
    if (bk::crc32c_hardware_available()) CHECK(bk::crc32c_extend_hardware(0, v.data.data(), v.data.size()) == v.crc);
  }
}

TEST_CASE("crc32c: hardware and portable agree on every length and alignment, and extend composes") {
  std::mt19937 gen(42);
  std::string data(4096 + 64, '\0');
  for (auto& c : data) c = static_cast<char>(gen());
  for (size_t start = 0; start < 9; ++start) {
    for (size_t len = 0; len < 600; len += (len < 80 ? 1 : 37)) {
      const char* p = data.data() + start;
      const uint32_t portable = bk::crc32c_extend_portable(0, p, len);
      if (bk::crc32c_hardware_available()) REQUIRE(bk::crc32c_extend_hardware(0, p, len) == portable);
      for (size_t cut : {size_t{0}, len / 3, len}) {
        REQUIRE(bk::crc32c_extend(bk::crc32c(p, cut), p + cut, len - cut) == portable);
        REQUIRE(bk::crc32c_extend_portable(bk::crc32c_extend_portable(0, p, cut), p + cut, len - cut) == portable);
      }
    }
  }
  const uint32_t whole = bk::crc32c(data);
  if (bk::crc32c_hardware_available()) CHECK(bk::crc32c_extend_hardware(0, data.data(), data.size()) == whole);
  CHECK(bk::crc32c_extend_portable(0, data.data(), data.size()) == whole);
}

TEST_CASE("crc32c: TFRecord masking") {
  // mask = rotate right by 15, plus 0xa282ead8 (mod 2^32), worked by hand for two values.
  CHECK(bk::crc32c_mask(0) == 0xa282ead8u);
  CHECK(bk::crc32c_mask(0x00008000u) == 0xa282ead9u);  // bit 15 rotates to bit 0
  CHECK(bk::crc32c_mask(0x00000001u) == 0xa284ead8u);  // bit 0 rotates to bit 17
  for (uint32_t c : {0u, 1u, 0xE3069283u, 0xffffffffu, 0x80000000u, 0x12345678u}) {
    CHECK(bk::crc32c_unmask(bk::crc32c_mask(c)) == c);
    CHECK(bk::crc32c_mask(c) != c);
  }
  CHECK(bk::masked_crc32c("123456789") == bk::crc32c_mask(0xE3069283u));
}

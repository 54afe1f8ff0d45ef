// The block-parallel bzip2 decoder (io/bzip2_parallel.h) against libbz2's own one-piece decoding, including a
// file made so that the block magic occurs at a bit position that is not a block boundary.
#include "io/bzip2_parallel.h"
#include "io/input.h"
#include "util/error.h"

#include "read_input.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cstring>

namespace fs = std::filesystem;
using bk_test::bzip2_bytes;
using bk_test::write_bytes;

namespace {

constexpr uint64_t kBlockMagic = 0x314159265359;

std::string read_all(const fs::path& path, int threads) { return bk_test::read_all(path, threads, "bzip2"); }

uint64_t bits_at(const std::string& s, uint64_t bit, int count) {
  uint64_t v = 0;
  for (int i = 0; i < count; ++i, ++bit) v = (v << 1) | ((static_cast<unsigned char>(s[bit / 8]) >> (7 - bit % 8)) & 1);
  return v;
}

// bzip2's block CRC: CRC-32 (poly 0x04c11db7), most significant bit first, over the block's original bytes.
struct BzCrc {
  uint32_t table[256];
  BzCrc() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i << 24;
      for (int k = 0; k < 8; ++k) c = (c & 0x80000000u) ? (c << 1) ^ 0x04c11db7u : c << 1;
      table[i] = c;
    }
  }
  uint32_t update(uint32_t crc, const std::string& s, size_t from, size_t to) const {
    for (size_t i = from; i < to; ++i) crc = (crc << 8) ^ table[(crc >> 24) ^ static_cast<unsigned char>(s[i])];
    return crc;
  }
};

}  // namespace

TEST_CASE("bzip2: block-parallel decoding equals libbz2's for any thread count, across streams and levels") {
  auto dir = bk_test::temp_dir("bz2par");
  std::string text, noise;
  for (int i = 0; i < 60000; ++i) text += "line " + std::to_string(i * 7919 % 100003) + " 1AY&SY\n";
  uint32_t x = 12345;
  for (int i = 0; i < 300000; ++i) noise.push_back(static_cast<char>((x = x * 1103515245u + 12345u) >> 24));
  const std::string zeros(3000000, '\0');  // one block of runs decodes to far more than its level's 900k
  std::string file, expected;
  auto add = [&](const std::string& piece, int level) {
    std::string out(piece.size() * 2 + 1000, '\0');
    unsigned len = static_cast<unsigned>(out.size());
    REQUIRE(BZ2_bzBuffToBuffCompress(out.data(), &len, const_cast<char*>(piece.data()),
                                     static_cast<unsigned>(piece.size()), level, 0, 0) == BZ_OK);
    file += out.substr(0, len);
    expected += piece;
  };
  add(text, 1);    // several 100k blocks
  add("", 9);      // an empty stream
  add(noise, 2);
  add(zeros, 9);
  add("", 1);
  add("x", 5);
  add(text.substr(0, 250000), 9);
  write_bytes(dir / "multi.bz2", file);
  for (int threads : {1, 2, 4, 7}) {
    CAPTURE(threads);
    CHECK(read_all(dir / "multi.bz2", threads) == expected);
  }
  fs::remove_all(dir);
}

TEST_CASE("bzip2: a block magic inside a block's header is not taken for a boundary") {
  // The block header is magic (48 bits), CRC (32), randomised (1), origPtr (24), then the 16-bit map of used
  // byte ranges. Choose the data so that the magic starts again at bit 22 of the CRC: the CRC's low 10 bits,
  // the randomised bit, origPtr (the rank of the rotation at 0) and the first 13 bits of the map spell it.
  const uint64_t orig_ptr = (kBlockMagic >> 13) & 0xFFFFFF;  // 706866
  const uint32_t crc_low = (kBlockMagic >> 38) & 0x3FF;
  REQUIRE(((kBlockMagic >> 37) & 1) == 0);  // not randomised
  std::string data;
  data.push_back(0x30);  // the only 0x30: the rotation at 0 ranks after every byte below 0x30, before the rest
  for (uint64_t i = 0; i < orig_ptr; ++i) data.push_back(static_cast<char>(i % 16));  // range 0, no runs
  const unsigned char high[] = {0x31, 0x40, 0x60, 0x80, 0x90, 0xc0};  // ranges 3, 4, 6, 8, 9, 12
  std::string tail;
  for (int i = 0; i < 60; ++i) tail.push_back(static_cast<char>(high[i % 6]));
  // Force the CRC's low bits by choosing the last four low bytes (no two equal neighbours: no runs).
  BzCrc crc;
  const size_t free_at = data.size() - 4;
  uint32_t prefix = crc.update(0xffffffffu, data, 0, free_at);
  bool found = false;
  for (uint32_t combo = 0; combo < 65536 && !found; ++combo) {
    for (int k = 0; k < 4; ++k) data[free_at + k] = static_cast<char>((combo >> (4 * k)) & 15);
    bool runs = data[free_at - 1] == data[free_at];
    for (int k = 1; k < 4; ++k) runs |= data[free_at + k] == data[free_at + k - 1];
    if (runs) continue;
    uint32_t c = crc.update(prefix, data, free_at, data.size());
    c = ~crc.update(c, tail, 0, tail.size());
    found = (c & 0x3FF) == crc_low;
  }
  REQUIRE(found);
  data += tail;
  const std::string file = bzip2_bytes(data);
  // The file: "BZh9", the block magic at bit 32, its CRC at bit 80; the magic again at bit 102.
  REQUIRE(bits_at(file, 32, 48) == kBlockMagic);
  REQUIRE(bits_at(file, 102, 48) == kBlockMagic);
  auto dir = bk_test::temp_dir("bz2magic");
  write_bytes(dir / "magic.bz2", file + bzip2_bytes("after") + file);
  for (int threads : {1, 3}) {
    CAPTURE(threads);
    CHECK(read_all(dir / "magic.bz2", threads) == data + "after" + data);
  }
  fs::remove_all(dir);
}

TEST_CASE("bzip2: corrupt and truncated input name the file and the byte") {
  auto dir = bk_test::temp_dir("bz2bad");
  std::string text;
  for (int i = 0; i < 40000; ++i) text += "word " + std::to_string(i) + "\n";
  std::string good = bzip2_bytes(text);
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x10;
  write_bytes(dir / "flip.bz2", flipped);
  write_bytes(dir / "cut.bz2", good.substr(0, good.size() - 100));
  write_bytes(dir / "trail.bz2", good + "garbage");
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    const std::string flip_error = (dir / "flip.bz2").string() + ": corrupt bzip2 data in the block at byte 4";
    CHECK_THROWS_WITH_AS(read_all(dir / "flip.bz2", threads), doctest::Contains(flip_error.c_str()), bk::Error);
    CHECK_THROWS_WITH_AS(read_all(dir / "cut.bz2", threads), doctest::Contains("(file truncated?)"), bk::Error);
    const std::string trail_error = fmt::format("at byte {}: bad stream magic", good.size());
    CHECK_THROWS_WITH_AS(read_all(dir / "trail.bz2", threads), doctest::Contains(trail_error.c_str()), bk::Error);
  }
  // The block decoder refuses a block cut short and one with a bit flipped (its CRC).
  std::string out;
  CHECK(!bk::decode_bzip2_block(good.substr(4), 0, (good.size() - 4) * 8 - 200, 9, out).empty());
  CHECK(out.empty());
  fs::remove_all(dir);
}

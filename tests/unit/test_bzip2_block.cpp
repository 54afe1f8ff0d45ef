// bertkit's bzip2 block decoder (io/bzip2_block.h) against libbz2 on the same blocks: text at every level, the
// run-length stage's edge cases, all 256 byte values, skewed data whose Huffman codes run past the lookup
// table's 10 bits, and corrupted blocks, which both must refuse alike.
#include "io/bzip2_block.h"
#include "io/bzip2_parallel.h"

#include <bzlib.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr uint64_t kBlockMagic = 0x314159265359, kEndMagic = 0x177245385090;

std::string compress(const std::string& s, int level) {
  std::string out(s.size() + s.size() / 50 + 1000, '\0');
  auto len = static_cast<unsigned>(out.size());
  REQUIRE(BZ2_bzBuffToBuffCompress(out.data(), &len, const_cast<char*>(s.data()), static_cast<unsigned>(s.size()),
                                   level, 0, 0) == BZ_OK);
  out.resize(len);
  return out;
}

// The blocks of a one-stream file as (first bit, bits): from each block magic to the next magic.
std::vector<std::pair<uint64_t, uint64_t>> blocks_of(const std::string& file) {
  std::vector<uint64_t> starts;
  uint64_t window = 0, end = 0;
  for (uint64_t bit = 0; bit < file.size() * 8; ++bit) {
    window = ((window << 1) | ((static_cast<unsigned char>(file[bit / 8]) >> (7 - bit % 8)) & 1)) & 0xFFFFFFFFFFFFull;
    if (bit < 47 + 32) continue;  // not inside the "BZh9" header
    if (window == kBlockMagic) starts.push_back(bit - 47);
    if (window == kEndMagic) end = bit - 47;
  }
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (size_t i = 0; i < starts.size(); ++i) {
    const uint64_t stop = i + 1 < starts.size() ? starts[i + 1] : end;
    out.emplace_back(starts[i], stop - starts[i]);
  }
  return out;
}

// Every block decoded both ways; returns the file's bytes by bertkit's decoder.
std::string decode_both(const std::string& file, int level) {
  std::string ours, theirs;
  for (const auto& [bit, bits] : blocks_of(file)) {
    const std::string why = bk::decode_bzip2_block_bits(reinterpret_cast<const unsigned char*>(file.data()),
                                                        file.size(), bit, bits, level, ours);
    CHECK(why == "");
    CHECK(bk::decode_bzip2_block_libbz2(file.substr(bit / 8), static_cast<unsigned>(bit % 8), bits, level, theirs) ==
          "");
  }
  CHECK(ours == theirs);
  return ours;
}

uint32_t lcg(uint32_t& x) { return x = x * 1664525u + 1013904223u; }

}  // namespace

TEST_CASE("bzip2 block decoder: the same bytes as libbz2 at every level, runs, every byte, long codes") {
  std::string text;
  for (int i = 0; i < 30000; ++i) text += "sentence " + std::to_string(i * 7919 % 100003) + " of the text.\n";
  for (int level = 1; level <= 9; level += 4) {
    CAPTURE(level);
    CHECK(decode_both(compress(text, level), level) == text);
  }
  // The run-length stage: runs of 1 to 300 (4 equal bytes and a count; 259 is the longest one run holds).
  std::string runs;
  for (int n = 1; n <= 300; ++n) runs += std::string(static_cast<size_t>(n), static_cast<char>('a' + n % 26)) + "|";
  runs += std::string(100000, 'z');
  CHECK(decode_both(compress(runs, 9), 9) == runs);
  CHECK(decode_both(compress(std::string(1, 'x'), 9), 9) == "x");
  CHECK(decode_both(compress("xxxx", 9), 9) == "xxxx");  // a run of 4 at the very end: no count byte follows
  // All 256 byte values, uniformly; then skewed (byte k about 2^-(k+1) of the time), so codes reach 17 bits.
  uint32_t x = 7;
  std::string uniform, skewed;
  for (int i = 0; i < 300000; ++i) uniform += static_cast<char>(lcg(x) >> 24);
  for (int i = 0; i < 300000; ++i) {
    int k = 0;
    for (uint32_t r = lcg(x); (r & 1) && k < 255; r = (r >> 1) | (lcg(x) & 0x80000000u)) ++k;
    skewed += static_cast<char>(k);
  }
  CHECK(decode_both(compress(uniform, 9), 9) == uniform);
  CHECK(decode_both(compress(skewed, 5), 5) == skewed);
  CHECK(bk::bzip2_crc(reinterpret_cast<const unsigned char*>("123456789"), 9) == 0xFC891918u);  // CRC-32/BZIP2
}

TEST_CASE("bzip2 block decoder: corrupted blocks are refused as libbz2 refuses them, never read past the input") {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "word " + std::to_string(i * 31 % 977) + " ";
  const std::string file = compress(text, 9);
  const auto blocks = blocks_of(file);
  REQUIRE(blocks.size() == 1);
  const auto [bit, bits] = blocks[0];
  uint32_t x = 99;
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = file;
    const uint64_t flip = bit + 48 + lcg(x) % (bits - 48);  // anywhere after the magic
    bad[flip / 8] = static_cast<char>(bad[flip / 8] ^ (0x80 >> (flip % 8)));
    std::string ours, theirs;
    const std::string why = bk::decode_bzip2_block_bits(reinterpret_cast<const unsigned char*>(bad.data()),
                                                        bad.size(), bit, bits, 9, ours);
    const std::string libbz2_why = bk::decode_bzip2_block_libbz2(bad.substr(bit / 8), bit % 8, bits, 9, theirs);
    CAPTURE(flip);
    CAPTURE(why);
    CAPTURE(libbz2_why);
    if (why == bk::kBzip2Randomised) continue;  // the randomised bit: left to libbz2
    CHECK(why.empty() == libbz2_why.empty());
    if (why.empty()) CHECK(ours == theirs);
    else CHECK(ours.empty());
    refused += !why.empty();
  }
  CHECK(refused > 2900);
  // Cut short: the block's bits run past the input.
  std::string out;
  CHECK(bk::decode_bzip2_block_bits(reinterpret_cast<const unsigned char*>(file.data()), file.size() - 20, bit, bits,
                                    9, out) != "");
  CHECK(out.empty());
  // A randomised block (the flag set on a normal one) goes to libbz2, whose de-randomising then fails the CRC.
  std::string randomised = file;
  const uint64_t flag = bit + 48 + 32;
  randomised[flag / 8] = static_cast<char>(randomised[flag / 8] | (0x80 >> (flag % 8)));
  CHECK(bk::decode_bzip2_block_bits(reinterpret_cast<const unsigned char*>(randomised.data()), randomised.size(),
                                    bit, bits, 9, out) == bk::kBzip2Randomised);
  CHECK(bk::decode_bzip2_block(randomised.substr(bit / 8), bit % 8, bits, 9, out) ==
        bk::decode_bzip2_block_libbz2(randomised.substr(bit / 8), bit % 8, bits, 9, out));
}

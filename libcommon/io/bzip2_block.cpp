#include "io/bzip2_block.h"

#include "io/inverse_bwt.h"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <vector>

namespace bk {

namespace {

constexpr uint64_t kBlockMagic = 0x314159265359ULL;
constexpr int kMaxGroups = 6;
constexpr int kMaxAlphabet = 258;  // 256 bytes in move-to-front order, less unused ones, + RUNA/RUNB + end
constexpr int kMaxCodeLength = 20;
constexpr int kGroupSymbols = 50;
constexpr int kMaxSelectors = 18002;  // bzip2 1.0.8 reads more but uses only these (2 + 900000 / 50)
constexpr int kLookupBits = 10;       // codes up to this long decode with one table lookup
constexpr uint64_t kMaxRunWeight = 2 * 1024 * 1024;

// CRC-32 MSB first (bzip2's), slicing by 8: table[k][b] is the CRC register after byte b and k zero bytes.
struct CrcTables {
  std::array<std::array<uint32_t, 256>, 8> table{};
  CrcTables() {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = b << 24;
      for (int i = 0; i < 8; ++i) c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
      table[0][b] = c;
    }
    for (int k = 1; k < 8; ++k)
      for (uint32_t b = 0; b < 256; ++b)
        table[k][b] = (table[k - 1][b] << 8) ^ table[0][table[k - 1][b] >> 24];
  }
};
const CrcTables kCrc;

uint32_t load_be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// The block's bits, MSB first, through a 64-bit window whose top `count_` bits are the next ones. Reads past the
// input give zeros; the caller compares consumed() with the block's length.
class BitReader {
 public:
  BitReader(const unsigned char* in, size_t n, uint64_t bit) : in_(in), n_(n), next_(bit / 8), consumed_(0) {
    refill();
    skip(static_cast<int>(bit % 8));
    consumed_ = 0;
  }

  void refill() {
    if (count_ > 56) return;
    if (next_ + 8 <= n_) {
      uint64_t v;
      std::memcpy(&v, in_ + next_, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      v = __builtin_bswap64(v);  // the bytes in stream order, the first one in the top bits
#endif
      window_ |= v >> count_;
      const int bytes = (63 - count_) >> 3;
      next_ += static_cast<size_t>(bytes);
      count_ += bytes * 8;
      return;
    }
    while (count_ <= 56) {
      const uint64_t byte = next_ < n_ ? in_[next_] : 0;
      ++next_;
      window_ |= byte << (56 - count_);
      count_ += 8;
    }
  }
  // The next k bits (k <= 32; at least k bits in the window).
  uint32_t peek(int k) const { return static_cast<uint32_t>(window_ >> (64 - k)); }
  void skip(int k) {
    window_ = k == 64 ? 0 : window_ << k;
    count_ -= k;
    consumed_ += static_cast<uint64_t>(k);
  }
  uint32_t get(int k) {
    if (count_ < k) refill();
    const uint32_t v = peek(k);
    skip(k);
    return v;
  }
  uint64_t get48() {
    const uint64_t high = get(24);
    return (high << 24) | get(24);
  }
  uint64_t consumed() const { return consumed_; }

 private:
  const unsigned char* in_;
  size_t n_, next_;
  uint64_t consumed_;
  uint64_t window_ = 0;
  int count_ = 0;
};

// One group's canonical Huffman code: codes of up to kLookupBits by table, longer ones length by length.
struct HuffmanCode {
  std::array<uint16_t, 1 << kLookupBits> lookup{};  // symbol << 5 | length; 0 = a longer code (or none)
  std::array<uint32_t, kMaxCodeLength + 1> limit{};  // per length L: one past the last L-bit code
  std::array<int32_t, kMaxCodeLength + 1> offset{};  // per length L: symbols[] index of code c is offset[L] + c
  std::array<uint16_t, kMaxAlphabet> symbols{};      // by (length, symbol)
  int max_length = 0;

  // Codes are assigned in order of (length, symbol), as bzip2 assigns them. Like libbz2, an oversubscribed set
  // (more codes of a length than it has values: only in a corrupt block, or for symbols never sent) is taken as
  // it is: its values past 2^length are unreachable, and every value of that length is a code.
  void build(const uint8_t* lengths, int alphabet) {
    std::array<int, kMaxCodeLength + 2> count{};
    for (int s = 0; s < alphabet; ++s) ++count[lengths[s]];
    uint32_t code = 0;
    int index = 0;
    std::array<uint32_t, kMaxCodeLength + 1> next_code{};
    for (int len = 1; len <= kMaxCodeLength; ++len) {
      next_code[len] = code;
      limit[len] = code + static_cast<uint32_t>(count[len]);
      offset[len] = index - static_cast<int32_t>(code);
      index += count[len];
      if (count[len] > 0) max_length = len;
      code = limit[len] << 1;
    }
    lookup.fill(0);
    for (int len = 1; len <= kMaxCodeLength; ++len)
      for (int s = 0; s < alphabet; ++s) {
        if (lengths[s] != len) continue;
        const uint32_t c = next_code[len]++;
        symbols[static_cast<size_t>(offset[len] + static_cast<int32_t>(c))] = static_cast<uint16_t>(s);
        if (len > kLookupBits || c >= (1u << len)) continue;
        const uint32_t first = c << (kLookupBits - len), last = (c + 1) << (kLookupBits - len);
        for (uint32_t e = first; e < last; ++e) lookup[e] = static_cast<uint16_t>((s << 5) | len);
      }
  }

  // The next symbol, or -1 for bits that are no code. At least kMaxCodeLength bits must be in the window.
  int decode(BitReader& bits) const {
    const uint16_t e = lookup[bits.peek(kLookupBits)];
    if (e != 0) {
      bits.skip(e & 31);
      return e >> 5;
    }
    for (int len = kLookupBits + 1; len <= max_length; ++len) {
      const uint32_t c = bits.peek(len);
      if (c < limit[len]) {
        bits.skip(len);
        return symbols[static_cast<size_t>(offset[len] + static_cast<int32_t>(c))];
      }
    }
    return -1;
  }
};

// Moves m[k] to the front of the move-to-front list, the bytes before it one place up; returns it. With SSE2:
// 16 bytes at a time from k's chunk down, each shifted up one byte with the last byte of the chunk below (m[k] for
// the first chunk) carried in, k's chunk blended so that its bytes above k stay. Most k are below 16 (one chunk).
inline unsigned char move_to_front(unsigned char* m, int k) {
  const unsigned char v = m[k];
#if defined(__SSE2__)
  const __m128i iota = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int c = k >> 4; c >= 0; --c) {
    unsigned char* p = m + 16 * c;
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const unsigned char carry = c > 0 ? p[-1] : v;
    const __m128i shifted = _mm_or_si128(_mm_slli_si128(chunk, 1), _mm_cvtsi32_si128(carry));
    __m128i result = shifted;
    if (c == (k >> 4)) {  // k's chunk: bytes at or below k move, the rest stay
      const __m128i moves = _mm_cmpgt_epi8(_mm_set1_epi8(static_cast<char>((k & 15) + 1)), iota);
      result = _mm_or_si128(_mm_and_si128(moves, shifted), _mm_andnot_si128(moves, chunk));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), result);
  }
#else
  std::memmove(m + 1, m, static_cast<size_t>(k));
  m[0] = v;
#endif
  return v;
}

// Per thread: the inverse transform's vectors and the pre-run-length bytes, kept between blocks.
struct Scratch {
  std::vector<uint32_t> tt;
  InverseBwtScratch walk;
  std::vector<unsigned char> bytes;
  std::array<HuffmanCode, kMaxGroups> codes;
};

// Undoes bzip2's first stage: after 4 equal bytes, one byte counts further copies.
void undo_initial_runs(const unsigned char* in, size_t n, std::string& out) {
  size_t w = out.size();
  out.resize(w + n + 1024);
  char* base = out.data();
  int last = -1, run = 0;
  for (size_t i = 0; i < n;) {
    const unsigned char b = in[i++];
    base[w++] = static_cast<char>(b);
    if (b != last) {
      last = b;
      run = 1;
      continue;
    }
    if (++run < 4 || i == n) continue;
    const size_t copies = in[i++];
    if (w + copies + (n - i) > out.size()) {
      out.resize(std::max(out.size() * 2, w + copies + (n - i) + 1024));
      base = out.data();
    }
    std::memset(base + w, b, copies);
    w += copies;
    last = -1;
    run = 0;
  }
  out.resize(w);
}

}  // namespace

uint32_t bzip2_crc(const unsigned char* p, size_t n, uint32_t crc) {
  uint32_t c = ~crc;
  const auto& t = kCrc.table;
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t x = c ^ load_be32(p);
    c = t[7][x >> 24] ^ t[6][(x >> 16) & 0xFF] ^ t[5][(x >> 8) & 0xFF] ^ t[4][x & 0xFF] ^ t[3][p[4]] ^ t[2][p[5]] ^
        t[1][p[6]] ^ t[0][p[7]];
  }
  for (; n > 0; --n, ++p) c = (c << 8) ^ t[0][(c >> 24) ^ *p];
  return ~c;
}

std::string decode_bzip2_block_bits(const unsigned char* in, size_t in_bytes, uint64_t bit_offset, uint64_t bits,
                                    int level, std::string& out) {
  if (level < 1 || level > 9) return "bad block size";
  if (bits < 48 + 32 + 1 + 24 + 16 || bit_offset + bits > static_cast<uint64_t>(in_bytes) * 8) return "block too short";
  thread_local Scratch scratch;
  BitReader r(in, in_bytes, bit_offset);
  if (r.get48() != kBlockMagic) return "no block magic";
  const uint32_t stored_crc = r.get(32);
  if (r.get(1) != 0) return kBzip2Randomised;
  const uint32_t orig_ptr = r.get(24);
  const size_t max_block = 100000 * static_cast<size_t>(level);

  // The bytes in use.
  std::array<unsigned char, 256> byte_of{};
  int in_use = 0;
  const uint32_t ranges = r.get(16);
  for (int i = 0; i < 16; ++i) {
    if (!(ranges & (0x8000u >> i))) continue;
    const uint32_t used = r.get(16);
    for (int j = 0; j < 16; ++j)
      if (used & (0x8000u >> j)) byte_of[static_cast<size_t>(in_use++)] = static_cast<unsigned char>(i * 16 + j);
  }
  if (in_use == 0) return "no bytes in use";
  const int alphabet = in_use + 2, end_of_block = in_use + 1;

  // The selectors: which code each group of 50 symbols uses.
  const int groups = static_cast<int>(r.get(3));
  if (groups < 2 || groups > kMaxGroups) return "bad number of Huffman groups";
  int selectors = static_cast<int>(r.get(15));
  if (selectors < 1) return "no selectors";
  std::vector<uint8_t> selector(static_cast<size_t>(std::min(selectors, kMaxSelectors)));
  std::array<uint8_t, kMaxGroups> order{0, 1, 2, 3, 4, 5};
  for (int i = 0; i < selectors; ++i) {
    int j = 0;
    while (r.get(1)) {
      if (++j >= groups) return "bad selector";
    }
    const uint8_t g = order[static_cast<size_t>(j)];
    for (; j > 0; --j) order[static_cast<size_t>(j)] = order[static_cast<size_t>(j - 1)];
    order[0] = g;
    if (i < kMaxSelectors) selector[static_cast<size_t>(i)] = g;
    if (r.consumed() > bits) return "truncated block";
  }
  selectors = std::min(selectors, kMaxSelectors);

  // The code lengths, and the codes.
  for (int t = 0; t < groups; ++t) {
    std::array<uint8_t, kMaxAlphabet> lengths{};
    int len = static_cast<int>(r.get(5));
    for (int s = 0; s < alphabet; ++s) {
      for (;;) {
        if (len < 1 || len > kMaxCodeLength) return "bad code length";
        if (!r.get(1)) break;
        len += r.get(1) ? -1 : 1;
      }
      lengths[static_cast<size_t>(s)] = static_cast<uint8_t>(len);
    }
    scratch.codes[static_cast<size_t>(t)].build(lengths.data(), alphabet);
    if (r.consumed() > bits) return "truncated block";
  }

  // The symbols: zero runs and move-to-front indices, into the low bytes of tt.
  std::vector<uint32_t>& tt = scratch.tt;
  if (tt.size() < max_block) tt.resize(max_block);
  std::array<uint32_t, 256> counts{};
  std::array<unsigned char, 256> mtf{};
  for (int i = 0; i < 256; ++i) mtf[static_cast<size_t>(i)] = static_cast<unsigned char>(i);
  size_t n = 0;
  uint64_t run = 0, weight = 1;
  int group = 0, left = 0;
  const HuffmanCode* code = nullptr;
  for (;;) {
    if (left == 0) {
      if (group >= selectors) return "more symbols than selectors";
      if (r.consumed() > bits) return "truncated block";
      code = &scratch.codes[selector[static_cast<size_t>(group++)]];
      left = kGroupSymbols;
    }
    --left;
    r.refill();
    const int symbol = code->decode(r);
    if (symbol < 0) return "bad Huffman code";
    if (symbol <= 1) {  // RUNA, RUNB: digits 1 and 2 of the run length in bijective base 2
      if (weight >= kMaxRunWeight) return "run too long";
      run += static_cast<uint64_t>(symbol + 1) * weight;
      weight <<= 1;
      continue;
    }
    if (run > 0) {
      if (run > max_block - n) return "block too long";
      const unsigned char b = byte_of[mtf[0]];
      counts[b] += static_cast<uint32_t>(run);
      std::fill(tt.data() + n, tt.data() + n + run, uint32_t{b});
      n += run;
      run = 0;
      weight = 1;
    }
    if (symbol == end_of_block) break;
    if (n >= max_block) return "block too long";
    const int k = symbol - 1;
    const unsigned char v = move_to_front(mtf.data(), k);
    const unsigned char b = byte_of[v];
    ++counts[b];
    tt[n++] = b;
  }
  if (r.consumed() != bits) return r.consumed() > bits ? "truncated block" : "bits after the end of the block";
  if (orig_ptr >= n) return "bad origin pointer";

  // The inverse Burrows-Wheeler transform: tt[i] >> 8 (bzip2's T vector) is the row that follows row i, its byte
  // in the low 8 bits; the text is the walk from tt[orig_ptr] >> 8. Each step is a load that depends on the one
  // before and misses the cache, so the walk is cut into segments walked several at a time (walk_segments).
  uint32_t* const t = tt.data();
  std::array<uint32_t, 256> next{};
  for (size_t b = 1; b < 256; ++b) next[b] = next[b - 1] + counts[b - 1];
  for (size_t i = 0; i < n; ++i) {
    const uint32_t b = t[i] & 0xFF, row = next[b]++;
    t[row] |= static_cast<uint32_t>(i) << 8;
  }
  std::vector<unsigned char>& bytes = scratch.bytes;
  if (bytes.size() < n) bytes.resize(max_block);
  walk_inverse_bwt(t, n, t[orig_ptr] >> 8, bytes.data(), scratch.walk);
  const size_t start = out.size();
  undo_initial_runs(bytes.data(), n, out);
  const auto* produced = reinterpret_cast<const unsigned char*>(out.data() + start);
  if (bzip2_crc(produced, out.size() - start) != stored_crc) {
    out.resize(start);
    return "block CRC mismatch";
  }
  return "";
}

}  // namespace bk

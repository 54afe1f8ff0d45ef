#include "util/py_random.h"

#include "util/error.h"

#include <algorithm>

namespace bk {
namespace {
constexpr int kN = 624, kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfu, kUpperMask = 0x80000000u, kLowerMask = 0x7fffffffu;
}  // namespace

int bit_length(uint64_t n) { return n == 0 ? 0 : 64 - __builtin_clzll(n); }

void PyRandom::init_genrand(uint32_t s) {
  mt_[0] = s;
  for (int i = 1; i < kN; ++i) mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  index_ = kN;
}

// MT19937's init_by_array, the seeding CPython uses for every int seed.
void PyRandom::seed_words(const std::vector<uint32_t>& words) {
  std::vector<uint32_t> key = words.empty() ? std::vector<uint32_t>{0} : words;
  init_genrand(19650218u);
  const int length = static_cast<int>(key.size());
  int i = 1, j = 0;
  for (int k = std::max(kN, length); k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525u)) + key[j] + static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
    if (j >= length) j = 0;
  }
  for (int k = kN - 1; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= kN) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
  }
  mt_[0] = 0x80000000u;  // non-zero initial state guaranteed
  index_ = kN;
}

void PyRandom::seed(int64_t seed) {
  // abs() in unsigned arithmetic so INT64_MIN works.
  uint64_t magnitude = seed < 0 ? ~static_cast<uint64_t>(seed) + 1 : static_cast<uint64_t>(seed);
  std::vector<uint32_t> key{static_cast<uint32_t>(magnitude)};
  if (magnitude >> 32) key.push_back(static_cast<uint32_t>(magnitude >> 32));
  seed_words(key);
}

namespace {

// The reference recurrence, split where (k + 1) and (k + kM) wrap around so the loops need no modulo; both
// loops and the tempering vectorise. Built for AVX2 too and picked when the process starts (an ifunc): the
// generator is a large part of mkpretrain's time.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
void twist_words(uint32_t* mt) {
  auto step = [mt](int k, int next, int far) {
    const uint32_t y = (mt[k] & kUpperMask) | (mt[next] & kLowerMask);
    mt[k] = mt[far] ^ (y >> 1) ^ ((y & 1) ? kMatrixA : 0);
  };
  int k = 0;
  for (; k < kN - kM; ++k) step(k, k + 1, k + kM);
  for (; k < kN - 1; ++k) step(k, k + 1, k + kM - kN);
  step(kN - 1, 0, kM - 1);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
void temper_words(const uint32_t* mt, uint32_t* tempered) {
  for (int i = 0; i < kN; ++i) {
    uint32_t y = mt[i];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    tempered[i] = y;
  }
}

}  // namespace

void PyRandom::twist() {
  twist_words(mt_.data());
  index_ = 0;
  temper_all();
}

void PyRandom::temper_all() { temper_words(mt_.data(), tempered_.data()); }

std::vector<uint32_t> PyRandom::getrandbits_words(int k) {
  if (k < 0) fail("getrandbits: number of bits must be non-negative, got {}", k);
  std::vector<uint32_t> words;
  words.reserve(static_cast<size_t>((k + 31) / 32));
  // Words are filled least significant first; the last (most significant) one keeps only its top bits.
  for (int left = k; left > 0; left -= 32) {
    uint32_t r = genrand_uint32();
    if (left < 32) r >>= 32 - left;
    words.push_back(r);
  }
  return words;
}

uint64_t PyRandom::getrandbits(int k) {
  if (k < 0 || k > 64) fail("getrandbits: {} bits do not fit in 64 (use getrandbits_words)", k);
  if (k == 0) return 0;
  if (k <= 32) return genrand_uint32() >> (32 - k);
  const uint64_t low = genrand_uint32();
  const uint64_t high = genrand_uint32() >> (64 - k);
  return low | (high << 32);
}

uint64_t PyRandom::randbelow_wide(uint64_t n) {
  if (n == 0) return 0;
  const int k = bit_length(n);
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

int64_t PyRandom::randrange(int64_t stop) {
  if (stop <= 0) fail("randrange: empty range ({})", stop);
  return static_cast<int64_t>(randbelow(static_cast<uint64_t>(stop)));
}

int64_t PyRandom::randrange(int64_t start, int64_t stop, int64_t step) {
  // Widths computed in unsigned arithmetic: stop - start may exceed INT64_MAX.
  if (step == 1) {
    if (stop <= start) fail("randrange: empty range ({}, {})", start, stop);
    const uint64_t width = static_cast<uint64_t>(stop) - static_cast<uint64_t>(start);
    return static_cast<int64_t>(static_cast<uint64_t>(start) + randbelow(width));
  }
  if (step == 0) fail("randrange: zero step");
  // Number of values: ceil(width / step), as Python's (width + step - 1) // step for step > 0.
  uint64_t n = 0;
  if (step > 0 && stop > start) {
    const uint64_t width = static_cast<uint64_t>(stop) - static_cast<uint64_t>(start);
    n = (width + static_cast<uint64_t>(step) - 1) / static_cast<uint64_t>(step);
  } else if (step < 0 && stop < start) {
    const uint64_t width = static_cast<uint64_t>(start) - static_cast<uint64_t>(stop);
    const uint64_t s = ~static_cast<uint64_t>(step) + 1;
    n = (width + s - 1) / s;
  }
  if (n == 0) fail("randrange: empty range ({}, {}, {})", start, stop, step);
  return static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(step) * randbelow(n));
}

int64_t PyRandom::randint(int64_t a, int64_t b) {
  if (a > b) fail("randint: empty range ({}, {})", a, b);
  const uint64_t width = static_cast<uint64_t>(b) - static_cast<uint64_t>(a) + 1;  // 0 only for the full int64 range
  if (width == 0) {
    // _randbelow(2**64) draws 65 bits until the top one is clear.
    for (;;) {
      auto w = getrandbits_words(65);
      if (w[2] == 0) return static_cast<int64_t>(static_cast<uint64_t>(a) + (w[0] | (static_cast<uint64_t>(w[1]) << 32)));
    }
  }
  return static_cast<int64_t>(static_cast<uint64_t>(a) + randbelow(width));
}

size_t PyRandom::choice_index(size_t size) {
  if (size == 0) fail("choice: empty sequence");
  return static_cast<size_t>(randbelow(size));
}

std::vector<uint32_t> py_seed_words(std::string_view decimal) {
  std::string_view digits = decimal;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
    fail("not a decimal integer seed: '{}'", decimal);
  std::vector<uint32_t> words;  // little-endian base 2^32, built by words = words * 10 + digit
  for (char c : digits) {
    uint64_t carry = static_cast<uint64_t>(c - '0');
    for (auto& w : words) {
      const uint64_t v = static_cast<uint64_t>(w) * 10 + carry;
      w = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
    if (carry) words.push_back(static_cast<uint32_t>(carry));
  }
  if (words.empty()) words.push_back(0);
  return words;
}

}  // namespace bk

// bk::PyRandom: the exact random stream of CPython's random.Random(seed) for integer seeds, so that tools
// reproducing google-research/bert's create_pretraining_data.py make the same choices (DESIGN.md section 5).
//
// The generator is MT19937. seed(n) runs MT's init_by_array over the 32-bit words of abs(n), least
// significant word first (seed 0 -> key [0]). The derived draws follow CPython's Lib/random.py and
// Modules/_randommodule.c: random() uses 53 bits from two outputs, getrandbits(k) takes the top k bits of
// each 32-bit output, _randbelow(n) rejects getrandbits(bit_length(n)) draws >= n.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace bk {

class PyRandom {
 public:
  explicit PyRandom(int64_t seed = 0) { this->seed(seed); }

  void seed(int64_t seed);                          // random.seed(seed) for an int seed
  void seed_words(const std::vector<uint32_t>& key);  // key = abs(seed) as 32-bit words, least significant first

  // One raw MT19937 output. Inline, with random() and randbelow(): instance creation draws millions of these.
  // The twist tempers all 624 outputs at once (a loop the compiler vectorises), so a draw is one load.
  uint32_t genrand_uint32() {
    if (index_ >= 624) twist();
    return tempered_[static_cast<size_t>(index_++)];
  }
  // [0, 1) with 53 random bits.
  double random() {
    const uint32_t a = genrand_uint32() >> 5, b = genrand_uint32() >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
  }
  // random() < 0.5, the same two outputs consumed, without floating point: random() is (a * 2**26 + b) / 2**53
  // with b < 2**26, so it is below one half exactly when a < 2**26, that is when the first output's top bit is 0.
  bool random_below_half() {
    const uint32_t first = genrand_uint32();
    genrand_uint32();
    return first < 0x80000000u;
  }

  // getrandbits(k) for 0 <= k <= 64; for larger k use getrandbits_words.
  uint64_t getrandbits(int k);
  // getrandbits(k) for any k >= 0, as 32-bit words least significant first (ceil(k/32) words, k=0 -> none).
  std::vector<uint32_t> getrandbits_words(int k);

  // _randbelow(n), n >= 1 (n == 0 returns 0, as CPython 3.10+).
  uint64_t randbelow(uint64_t n) {
    if (n == 0 || n > 0xFFFFFFFFull) return randbelow_wide(n);
    const int shift = 32 - (64 - __builtin_clzll(n));  // 32 - bit_length(n)
    uint32_t r = genrand_uint32() >> shift;
    while (r >= n) r = genrand_uint32() >> shift;
    return r;
  }
  int64_t randint(int64_t a, int64_t b);                  // a <= result <= b; bk::Error if a > b
  int64_t randrange(int64_t stop);                        // randrange(stop)
  int64_t randrange(int64_t start, int64_t stop, int64_t step = 1);

  // random.shuffle(x): i from len-1 down to 1, j = _randbelow(i + 1), swap x[i] and x[j].
  template <typename T>
  void shuffle(std::vector<T>& x) {
    shuffle(x.data(), x.size());
  }
  template <typename T>
  void shuffle(T* x, size_t n) {
    size_t i = n;
    for (; i > 0xFFFFFFFFull; --i) {  // over 2**32 elements: the general _randbelow
      using std::swap;
      swap(x[i - 1], x[randbelow(i)]);
    }
    // The common case, a block of bounds at a time in two passes. First the draws, one per bound.
    // Within a band of bounds of one bit length the shift is fixed, and a draw at or above the bound (CPython's
    // rejection, taken at random about a third of the time) is absorbed without a branch: the bound stays and the next
    // draw overwrites its pick. Then the swaps, free of the generator's dependency chain.
    constexpr uint32_t kBlock = 1024;
    uint32_t picks[kBlock];  // picks[b - block_low] = _randbelow(b)
    uint32_t m = static_cast<uint32_t>(i);
    int index = index_;
    while (m > 1) {
      const uint32_t block_low = m > kBlock ? m - kBlock + 1 : 2;  // this block: bounds m down to block_low
      uint32_t b = m;
      while (b >= block_low) {
        const int shift = __builtin_clz(b);  // 32 - bit_length(b)
        const uint32_t band_low = std::max(uint32_t{1} << (31 - shift), block_low);
        while (b >= band_low) {
          if (index >= 624) {
            twist();
            index = 0;
          }
          for (; index < 624 && b >= band_low; ++index) {
            const uint32_t j = tempered_[static_cast<size_t>(index)] >> shift;
            picks[b - block_low] = j;
            b -= j < b;
          }
        }
      }
      for (b = m; b >= block_low; --b) {
        using std::swap;
        swap(x[b - 1], x[picks[b - block_low]]);
      }
      m = block_low - 1;
    }
    index_ = index;
  }

  // random.choice(seq): seq[_randbelow(len(seq))]; bk::Error on an empty sequence.
  template <typename T>
  const T& choice(const std::vector<T>& seq) {
    return seq[choice_index(seq.size())];
  }
  size_t choice_index(size_t size);

  // The full generator state (for checkpointing a long run).
  struct State {
    std::array<uint32_t, 624> mt;
    int index;
  };
  State state() const { return {mt_, index_}; }
  void set_state(const State& s) {
    mt_ = s.mt;
    index_ = s.index;
    temper_all();
  }

 private:
  uint64_t randbelow_wide(uint64_t n);
  void init_genrand(uint32_t s);
  void twist();        // the next 624 states, then temper_all()
  void temper_all();   // tempered_[i] = MT19937's tempering of mt_[i]

  std::array<uint32_t, 624> mt_{};
  std::array<uint32_t, 624> tempered_{};
  int index_ = 625;
};

// abs(n) of a decimal integer string ("-123", "2**100" not accepted) as 32-bit words, least significant
// first, as seed_words expects. Throws bk::Error on anything but [+-]digits.
std::vector<uint32_t> py_seed_words(std::string_view decimal);

// Python's int.bit_length().
int bit_length(uint64_t n);

}  // namespace bk

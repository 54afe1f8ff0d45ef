// bk::PyRandom: the exact random stream of CPython's random.Random(seed) for integer seeds, so that tools
// reproducing google-research/bert's create_pretraining_data.py make the same choices (DESIGN.md section 5).
//
// The generator is MT19937. seed(n) runs MT's init_by_array over the 32-bit words of abs(n), least
// significant word first (seed 0 -> key [0]). The derived draws follow CPython's Lib/random.py and
// Modules/_randommodule.c: random() uses 53 bits from two outputs, getrandbits(k) takes the top k bits of
// each 32-bit output, _randbelow(n) rejects getrandbits(bit_length(n)) draws >= n.
#pragma once

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
  uint32_t genrand_uint32() {
    if (index_ >= 624) twist();
    uint32_t y = mt_[static_cast<size_t>(index_++)];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
  }
  // [0, 1) with 53 random bits.
  double random() {
    const uint32_t a = genrand_uint32() >> 5, b = genrand_uint32() >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
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
    for (size_t i = x.size(); i-- > 1;) {
      size_t j = static_cast<size_t>(randbelow(i + 1));
      using std::swap;
      swap(x[i], x[j]);
    }
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
  }

 private:
  uint64_t randbelow_wide(uint64_t n);
  void init_genrand(uint32_t s);
  void twist();

  std::array<uint32_t, 624> mt_{};
  int index_ = 625;
};

// abs(n) of a decimal integer string ("-123", "2**100" not accepted) as 32-bit words, least significant
// first, as seed_words expects. Throws bk::Error on anything but [+-]digits.
std::vector<uint32_t> py_seed_words(std::string_view decimal);

// Python's int.bit_length().
int bit_length(uint64_t n);

}  // namespace bk

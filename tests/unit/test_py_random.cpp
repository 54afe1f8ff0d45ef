#include <doctest/doctest.h>

#include "util/error.h"
#include "util/py_random.h"

#include <limits>
#include <numeric>

// Expected values below were printed by CPython 3.11.7 (the stdlib `random` module), with the exact
// expression given beside each; tests/compat/test_py_random.py checks many more seeds and calls live.

TEST_CASE("py_random: values produced by CPython") {
  {
    // r = random.Random(12345); repr(r.random()), repr(r.random())
    bk::PyRandom r(12345);
    CHECK(r.random() == 0.41661987254534116);
    CHECK(r.random() == 0.010169169457068361);
  }
  {
    // r = random.Random(0); [r.getrandbits(32) for _ in range(3)]
    bk::PyRandom r(0);
    CHECK(r.getrandbits(32) == 3626764237u);
    CHECK(r.getrandbits(32) == 1654615998u);
    CHECK(r.getrandbits(32) == 3255389356u);
  }
  {
    // r = random.Random(2**32+5); r.randint(2,125), r.randint(0,30521), r.getrandbits(64)
    bk::PyRandom r((int64_t{1} << 32) + 5);
    CHECK(r.randint(2, 125) == 22);
    CHECK(r.randint(0, 30521) == 15908);
    CHECK(r.getrandbits(64) == 16416234625733561141ull);
  }
  {
    // r = random.Random(-7); x = list(range(10)); r.shuffle(x); x
    bk::PyRandom r(-7);
    std::vector<int> x(10);
    std::iota(x.begin(), x.end(), 0);
    r.shuffle(x);
    CHECK(x == std::vector<int>{8, 3, 1, 4, 7, 0, 9, 6, 2, 5});
  }
  {
    // r = random.Random(1); r.randint(-2**63, 2**63 - 1)   (_randbelow(2**64) draws 65 bits, rejecting once here)
    bk::PyRandom r(1);
    CHECK(r.randint(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()) == 4865782901354085936);
  }
  {
    // repr(random.Random(2**100+3).random())
    bk::PyRandom r;
    r.seed_words(bk::py_seed_words("1267650600228229401496703205379"));
    CHECK(r.random() == 0.3567616365770526);
  }
}

TEST_CASE("py_random: seeding rules") {
  // A negative seed is its absolute value, and int64 seeds agree with the decimal-words route.
  for (int64_t s : {int64_t{0}, int64_t{1}, int64_t{12345}, (int64_t{1} << 32) + 5, int64_t{-99}}) {
    bk::PyRandom a(s), b(s < 0 ? -s : s), c;
    c.seed_words(bk::py_seed_words(std::to_string(s)));
    for (int i = 0; i < 5; ++i) {
      const uint32_t x = a.genrand_uint32();
      CHECK(x == b.genrand_uint32());
      CHECK(x == c.genrand_uint32());
    }
  }
  bk::PyRandom min_seed(std::numeric_limits<int64_t>::min()), min_words;
  min_words.seed_words(bk::py_seed_words("9223372036854775808"));
  CHECK(min_seed.genrand_uint32() == min_words.genrand_uint32());
  CHECK(bk::py_seed_words("0") == std::vector<uint32_t>{0});
  CHECK(bk::py_seed_words("4294967301") == std::vector<uint32_t>{5, 1});  // 2**32 + 5
  CHECK(bk::py_seed_words("-4294967296") == std::vector<uint32_t>{0, 1});
  CHECK_THROWS_AS(bk::py_seed_words("12a"), bk::Error);
  CHECK_THROWS_AS(bk::py_seed_words("-"), bk::Error);
}

TEST_CASE("py_random: derived draws and their errors") {
  CHECK(bk::bit_length(0) == 0);
  CHECK(bk::bit_length(1) == 1);
  CHECK(bk::bit_length(255) == 8);
  CHECK(bk::bit_length(256) == 9);
  CHECK(bk::bit_length(~uint64_t{0}) == 64);
  bk::PyRandom r(5), s(5);
  // getrandbits(k <= 32) is the top k bits of one output; getrandbits(40) is one full word plus 8 top bits.
  CHECK(r.getrandbits(7) == s.genrand_uint32() >> 25);
  const uint64_t lo = s.genrand_uint32(), hi = s.genrand_uint32() >> 24;
  CHECK(r.getrandbits(40) == (lo | (hi << 32)));
  CHECK(r.getrandbits(0) == 0);
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = r.randint(-3, 3);
    CHECK((v >= -3 && v <= 3));
    const int64_t w = r.randrange(10, 0, -3);  // 10, 7, 4, 1
    CHECK((w == 10 || w == 7 || w == 4 || w == 1));
  }
  CHECK(r.randint(4, 4) == 4);
  CHECK_THROWS_WITH_AS(r.randint(5, 4), "randint: empty range (5, 4)", bk::Error);
  CHECK_THROWS_WITH_AS(r.randrange(0), "randrange: empty range (0)", bk::Error);
  CHECK_THROWS_WITH_AS(r.randrange(1, 5, 0), "randrange: zero step", bk::Error);
  CHECK_THROWS_WITH_AS(r.choice(std::vector<int>{}), "choice: empty sequence", bk::Error);
  const auto saved = r.state();
  const double next = r.random();
  r.set_state(saved);
  CHECK(r.random() == next);
}

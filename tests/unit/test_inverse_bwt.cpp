// The segmented inverse-BWT walk (io/inverse_bwt.h) against the plain one-row-at-a-time walk on T vectors made
// here: one random cycle of every size class (below the segmented walk's threshold, at it, a full 900k block), the
// text starting on a row the walk also cuts at, and vectors of several cycles, as a corrupt block gives, which
// must come out exactly as the plain walk (libbz2's) gives them.
#include "io/inverse_bwt.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace {

// A T vector whose rows form the given cycles, each row's byte random; returns the vector.
std::vector<uint32_t> t_vector(size_t n, const std::vector<std::vector<uint32_t>>& cycles, std::mt19937& rng) {
  std::vector<uint32_t> t(n, 0xFFFFFFFFu);
  for (const auto& cycle : cycles)
    for (size_t k = 0; k < cycle.size(); ++k)
      t[cycle[k]] = (cycle[(k + 1) % cycle.size()] << 8) | static_cast<uint32_t>(rng() & 0xFF);
  return t;
}

std::vector<uint32_t> shuffled_rows(size_t n, std::mt19937& rng) {
  std::vector<uint32_t> rows(n);
  std::iota(rows.begin(), rows.end(), 0u);
  std::shuffle(rows.begin(), rows.end(), rng);
  return rows;
}

// The segmented walk's text equals the plain walk's, and t is left as it was.
void check_walks_agree(std::vector<uint32_t> t, uint32_t first, bk::InverseBwtScratch& scratch) {
  const size_t n = t.size();
  std::vector<unsigned char> expected(n), text(n, 0xAA);
  bk::walk_inverse_bwt_plain(t.data(), n, first, expected.data());
  const auto before = t;
  bk::walk_inverse_bwt(t.data(), n, first, text.data(), scratch);
  CHECK(t == before);
  CHECK(text == expected);
}

}  // namespace

TEST_CASE("inverse BWT: the segmented walk spells the plain walk's text on one cycle") {
  std::mt19937 rng(7);
  bk::InverseBwtScratch scratch;  // reused across sizes, as a decoding thread reuses it across blocks
  for (const size_t n : {size_t{1}, size_t{100}, size_t{32767}, size_t{32768}, size_t{40000}, size_t{250001},
                         size_t{900000}}) {
    CAPTURE(n);
    const auto rows = shuffled_rows(n, rng);
    const auto t = t_vector(n, {rows}, rng);
    check_walks_agree(t, rows[0], scratch);
    check_walks_agree(t, rows[n / 2], scratch);
    check_walks_agree(t, 0, scratch);                             // on a row the walk cuts at anyway
    check_walks_agree(t, static_cast<uint32_t>(n / 256), scratch);  // likewise
  }
}

TEST_CASE("inverse BWT: a vector of several cycles comes out as the plain walk gives it") {
  std::mt19937 rng(11);
  bk::InverseBwtScratch scratch;
  const size_t n = 200000;
  const auto rows = shuffled_rows(n, rng);
  for (const size_t split : {size_t{1}, size_t{5000}, size_t{100000}, n - 1}) {
    CAPTURE(split);
    const std::vector<uint32_t> a(rows.begin(), rows.begin() + static_cast<long>(split));
    const std::vector<uint32_t> b(rows.begin() + static_cast<long>(split), rows.end());
    const auto t = t_vector(n, {a, b}, rng);
    check_walks_agree(t, a[0], scratch);
    check_walks_agree(t, b[b.size() / 3], scratch);
  }
  // Every row its own cycle: the plain walk repeats one byte n times.
  std::vector<std::vector<uint32_t>> singles;
  for (uint32_t r = 0; r < 50000; ++r) singles.push_back({r});
  check_walks_agree(t_vector(50000, singles, rng), 1234, scratch);
}

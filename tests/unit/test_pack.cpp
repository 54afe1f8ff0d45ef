#include <doctest/doctest.h>

#include "../error_of.h"
#include "datasets/pack.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

// Lengths spread evenly over [2, width]: every row can be filled.
std::vector<bk::PackItem> spread(size_t count, int width, uint64_t seed) {
  std::vector<bk::PackItem> items(count);
  uint64_t state = seed;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % bound);
  };
  for (auto& item : items) {
    item.length = 2 + next(static_cast<uint64_t>(width - 1));
    item.predictions = std::max(1, item.length * 15 / 100);
  }
  return items;
}

}  // namespace

TEST_CASE("pack: every sample lands in exactly one row, and no row overflows") {
  for (int max_sequences : {1, 2, 3, 8}) {
    CAPTURE(max_sequences);
    const auto items = spread(2000, 512, 42 + static_cast<uint64_t>(max_sequences));
    const int max_predictions = 76 + max_sequences;
    const auto rows = bk::plan_packs(items, 512, max_sequences, max_predictions);
    std::vector<int> seen(items.size(), 0);
    int64_t tokens = 0;
    for (const auto& row : rows) {
      REQUIRE(!row.empty());
      CHECK(static_cast<int>(row.size()) <= max_sequences);
      CHECK(std::is_sorted(row.begin(), row.end()));
      int length = 0, predictions = 0;
      for (uint32_t i : row) {
        ++seen[i];
        length += items[i].length;
        predictions += items[i].predictions;
      }
      CHECK(length <= 512);
      CHECK(predictions <= max_predictions);
      tokens += length;
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    if (max_sequences == 1) CHECK(rows.size() == items.size());
    // Lower bound: the tokens in full rows. Best-fit decreasing stays within 2% of it with 3 or more per row.
    const double lower = static_cast<double>(tokens) / 512.0;
    if (max_sequences >= 3) CHECK(static_cast<double>(rows.size()) <= lower * 1.02 + 1);
  }
}

TEST_CASE("pack: the plan is the same on every run and fills rows best-fit") {
  // Longest first: 8, 6 and 5 open rows (free 2, 4, 5); 4 fills the row of 6 exactly; 3 goes to the row of 5 (free
  // 2 now, like the row of 8), and 2 to the most recently filled of the two. Within a row, input order.
  const std::vector<bk::PackItem> items = {{4, 1}, {3, 1}, {8, 1}, {6, 1}, {2, 1}, {5, 1}};
  const auto rows = bk::plan_packs(items, 10, 3, 10);
  const std::vector<std::vector<uint32_t>> want = {{2}, {0, 3}, {1, 4, 5}};
  CHECK(rows == want);
  CHECK(bk::plan_packs(items, 10, 3, 10) == rows);
}

TEST_CASE("pack: a sample too long for a row is an error") {
  const std::vector<bk::PackItem> items = {{4, 1}, {12, 2}};
  CHECK(bk_test::error_of([&] { bk::plan_packs(items, 10, 3, 10); }) ==
        "sample 1 (12 tokens, 2 predictions) does not fit a row of 10 tokens and 10 predictions");
}

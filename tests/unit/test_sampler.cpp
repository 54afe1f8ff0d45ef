// The pretraining sampler's plans (torch-free): the bin ratio, and which rows each rank reads in an epoch.
#include "tasks/pretraining/sampler.h"

#include <doctest/doctest.h>

#include <set>
#include <utility>
#include <vector>

TEST_CASE("bin ratio: scaled to the batch size by largest remainder") {
  CHECK(bk::scale_bin_ratio({6, 3, 2, 5}, 16) == std::vector<int64_t>{6, 3, 2, 5});
  CHECK(bk::scale_bin_ratio({6, 3, 2, 5}, 32) == std::vector<int64_t>{12, 6, 4, 10});
  // 8 * (6,3,2,5) / 16 = 3, 1.5, 1, 2.5: one row left, the tie between .5s goes to the lower bin.
  CHECK(bk::scale_bin_ratio({6, 3, 2, 5}, 8) == std::vector<int64_t>{3, 2, 1, 2});
  // 4 * ... / 16 = 1.5, .75, .5, 1.25: two rows left, to .75 and then (tie .5/.5) the lower bin.
  CHECK(bk::scale_bin_ratio({6, 3, 2, 5}, 4) == std::vector<int64_t>{2, 1, 0, 1});
  CHECK(bk::scale_bin_ratio({1, 0, 1}, 3) == std::vector<int64_t>{2, 0, 1});
  CHECK_THROWS(bk::scale_bin_ratio({0, 0}, 4));
  CHECK_THROWS(bk::scale_bin_ratio({1, -1}, 4));
}

TEST_CASE("epoch slices: every row of every file read by exactly one rank, the same plan on every call") {
  const std::vector<bk::SampleFile> files = {{"a", 7}, {"b", 3}, {"c", 10}, {"d", 1}, {"e", 6}};
  for (int world : {1, 2, 3, 4, 7}) {
    std::multiset<std::pair<size_t, uint64_t>> rows;
    for (int rank = 0; rank < world; ++rank) {
      const auto slices = bk::epoch_slices(files, 42, 3, 0, rank, world);
      CHECK(slices == bk::epoch_slices(files, 42, 3, 0, rank, world));
      for (const auto& s : slices)
        for (uint64_t k = 0; k < s.count; ++k) rows.insert({s.file, s.first + k * s.step});
    }
    CHECK(rows.size() == 27);
    for (size_t f = 0; f < files.size(); ++f)
      for (uint64_t r = 0; r < files[f].rows; ++r) CHECK(rows.count({f, r}) == 1);
  }
  // Another epoch or seed deals the files in another order.
  CHECK(bk::epoch_file_order(5, 42, 3, 0) != bk::epoch_file_order(5, 42, 4, 0));
}

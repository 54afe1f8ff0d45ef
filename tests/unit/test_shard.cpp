#include <doctest/doctest.h>

#include "util/error.h"
#include "shard/plan.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace {

// Document sizes shaped like a text corpus: mostly short, a long tail of long ones.
std::vector<uint64_t> corpus_like_sizes(size_t n, uint32_t rng_seed) {
  std::mt19937_64 rng(rng_seed);
  std::vector<uint64_t> sizes(n);
  for (auto& s : sizes) {
    double u = (rng() >> 11) * 0x1.0p-53;
    s = 200 + static_cast<uint64_t>(300.0 / std::max(1e-3, u * u));  // heavy tail, up to ~300 kB
  }
  return sizes;
}

// The promise `shard` makes: the heaviest shard is at most one document or 1% above the mean.
void check_bound(const bk::ShardBalance& b) {
  double slack = std::max(b.mean_bytes() * 0.01, static_cast<double>(b.largest_item));
  CHECK(static_cast<double>(b.max_bytes()) <= b.mean_bytes() + slack);
}

}  // namespace

TEST_CASE("shard: balance_by_bytes keeps every shard within one document or 1% of the mean") {
  for (uint32_t shards : {1u, 2u, 3u, 16u, 256u}) {
    for (size_t n : {size_t{300}, size_t{5000}}) {
      if (n < shards) continue;
      auto sizes = corpus_like_sizes(n, shards * 7919 + static_cast<uint32_t>(n));
      auto shard_of = bk::balance_by_bytes(sizes, shards, 42);
      REQUIRE(shard_of.size() == n);
      for (uint32_t s : shard_of) REQUIRE(s < shards);
      auto b = bk::measure_balance(sizes, shard_of, shards);
      uint64_t sum = 0;
      for (auto x : sizes) sum += x;
      CHECK(b.total == sum);
      check_bound(b);
    }
  }
}

TEST_CASE("shard: many similar documents balance to well under 1%") {
  std::vector<uint64_t> sizes;
  for (uint64_t i = 0; i < 20000; ++i) sizes.push_back(1000 + (i * 7919) % 4000);  // 1 to 5 kB
  auto b = bk::measure_balance(sizes, bk::balance_by_bytes(sizes, 64, 1), 64);
  CHECK(b.imbalance() < 1.001);
}

TEST_CASE("shard: one huge document sets the maximum, the rest share the others") {
  std::vector<uint64_t> sizes(100, 10);
  sizes[37] = 100000;
  auto b = bk::measure_balance(sizes, bk::balance_by_bytes(sizes, 4, 3), 4);
  std::vector<uint64_t> loads = b.bytes;
  std::sort(loads.begin(), loads.end());
  // LPT: the giant alone in one shard, the 99 small ones spread 33/33/33 over the other three.
  CHECK(loads == std::vector<uint64_t>{330, 330, 330, 100000});
  check_bound(b);
}

TEST_CASE("shard: largest-first greedy on a small worked example") {
  // 10->A, 9->B, 8->B (17), 7->A (17), 6->A (tie, lower index: 23), 5->B (22).
  std::vector<uint64_t> sizes{5, 10, 6, 9, 7, 8};
  auto b = bk::measure_balance(sizes, bk::balance_by_bytes(sizes, 2, 99), 2);
  std::vector<uint64_t> loads = b.bytes;
  std::sort(loads.begin(), loads.end());
  CHECK(loads == std::vector<uint64_t>{22, 23});
  CHECK(b.documents[0] + b.documents[1] == 6);
}

TEST_CASE("shard: assignments are deterministic for a seed and change with it") {
  auto sizes = corpus_like_sizes(2000, 5);
  auto a = bk::balance_by_bytes(sizes, 16, 12345);
  CHECK(a == bk::balance_by_bytes(sizes, 16, 12345));
  CHECK(a != bk::balance_by_bytes(sizes, 16, 12346));
  // Equal-sized documents: the seed, not the position, decides which of them share a shard.
  std::vector<uint64_t> equal(64, 100);
  auto e1 = bk::balance_by_bytes(equal, 8, 1), e2 = bk::balance_by_bytes(equal, 8, 2);
  CHECK(e1 != e2);
  CHECK(bk::measure_balance(equal, e1, 8).imbalance() == doctest::Approx(1.0));
}

TEST_CASE("shard: the test split takes exactly round(F * n) documents, spread over the input") {
  CHECK(bk::test_document_count(37, 0.1) == 4);
  CHECK(bk::test_document_count(10, 0.25) == 3);  // 2.5 rounds up
  CHECK(bk::test_document_count(1000, 0.0) == 0);
  CHECK(bk::test_document_count(1000, 0.01) == 10);

  auto chosen = bk::choose_test_documents(10000, 1000, 12345);
  CHECK(std::count(chosen.begin(), chosen.end(), true) == 1000);
  // A uniform sample: each tenth of the input gets about a tenth of the test documents (binomial sd ~ 9.5).
  for (int part = 0; part < 10; ++part) {
    auto begin = chosen.begin() + part * 1000;
    auto in_part = std::count(begin, begin + 1000, true);
    CHECK(in_part > 60);
    CHECK(in_part < 140);
  }
  CHECK(chosen == bk::choose_test_documents(10000, 1000, 12345));
  CHECK(chosen != bk::choose_test_documents(10000, 1000, 54321));
  auto none = bk::choose_test_documents(50, 0, 1);
  CHECK(std::count(none.begin(), none.end(), true) == 0);
}

TEST_CASE("shard: make_shard_plan splits, balances each split and refuses too few documents") {
  auto sizes = corpus_like_sizes(1000, 11);
  auto plan = bk::make_shard_plan(sizes, 8, 2, 0.05, 7);
  uint64_t test_docs = 0, train_docs = 0;
  for (uint32_t s : plan.shard_of) {
    if (s & bk::ShardPlan::kTest) {
      ++test_docs;
      CHECK((s & ~bk::ShardPlan::kTest) < 2);
    } else {
      ++train_docs;
      CHECK(s < 8);
    }
  }
  CHECK(test_docs == 50);
  CHECK(train_docs == 950);
  check_bound(plan.training);
  check_bound(plan.test);
  uint64_t all = 0;
  for (auto x : sizes) all += x;
  CHECK(plan.training.total + plan.test.total == all);

  CHECK_THROWS_AS(bk::make_shard_plan({}, 1, 0, 0.0, 1), bk::Error);
  CHECK_THROWS_AS(bk::make_shard_plan(std::vector<uint64_t>(5, 1), 6, 0, 0.0, 1), bk::Error);
  CHECK_THROWS_AS(bk::make_shard_plan(std::vector<uint64_t>(30, 1), 2, 4, 0.1, 1), bk::Error);  // 3 test docs
  CHECK_NOTHROW(bk::make_shard_plan(std::vector<uint64_t>(30, 1), 2, 3, 0.1, 1));
}

TEST_CASE("shard: file names are 0-based and five digits") {
  CHECK(bk::shard_path("out/wiki", "training", 3, 256) == "out/wiki_training-00003-of-00256.txt");
  CHECK(bk::shard_path("p", "test", 0, 16) == "p_test-00000-of-00016.txt");
}

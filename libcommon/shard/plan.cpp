#include "shard/plan.h"

#include "util/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

namespace bk {
namespace {

// splitmix64 of (seed, value): the one hash every seeded choice here uses. Stable across platforms.
uint64_t seeded_hash(uint64_t seed, uint64_t value) {
  // Two rounds of splitmix64's finaliser: one mixes the seed, the second the value into it.
  auto mix = [](uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  return mix(mix(seed) ^ value);
}

}  // namespace

uint64_t test_document_count(uint64_t documents, double fraction) {
  return static_cast<uint64_t>(std::llround(fraction * static_cast<double>(documents)));
}

std::vector<bool> choose_test_documents(uint64_t documents, uint64_t count, uint64_t seed) {
  std::vector<bool> is_test(documents, false);
  if (count == 0) return is_test;
  if (count >= documents) return std::vector<bool>(documents, true);
  std::vector<uint32_t> order(documents);
  std::iota(order.begin(), order.end(), 0u);
  auto before = [seed](uint32_t a, uint32_t b) {
    uint64_t ha = seeded_hash(seed, a), hb = seeded_hash(seed, b);
    return ha != hb ? ha < hb : a < b;
  };
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(), before);
  for (uint64_t i = 0; i < count; ++i) is_test[order[i]] = true;
  return is_test;
}

std::vector<uint32_t> balance_by_bytes(const std::vector<uint64_t>& bytes, uint32_t shards, uint64_t seed) {
  if (shards == 0) fail("cannot balance over zero shards");
  std::vector<uint32_t> order(bytes.size());
  std::iota(order.begin(), order.end(), 0u);
  // Largest first; equal sizes in a seeded order so the seed, not the input position, decides among them.
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (bytes[a] != bytes[b]) return bytes[a] > bytes[b];
    uint64_t ha = seeded_hash(seed, a), hb = seeded_hash(seed, b);
    return ha != hb ? ha < hb : a < b;
  });
  // Min-heap of (load, shard): the lightest shard on top, the lower index first among equal loads.
  using Slot = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<>> lightest;
  for (uint32_t s = 0; s < shards; ++s) lightest.emplace(0, s);
  std::vector<uint32_t> shard_of(bytes.size());
  for (uint32_t item : order) {
    auto [load, s] = lightest.top();
    lightest.pop();
    shard_of[item] = s;
    lightest.emplace(load + bytes[item], s);
  }
  // A seeded Fisher-Yates permutation of the labels: which file gets which group depends on the seed.
  std::vector<uint32_t> label(shards);
  std::iota(label.begin(), label.end(), 0u);
  for (uint32_t i = shards; i > 1; --i) {
    uint32_t j = static_cast<uint32_t>(seeded_hash(seed ^ 0x5eed5eed5eedull, i) % i);  // bias < 2^-32, harmless
    std::swap(label[i - 1], label[j]);
  }
  for (auto& s : shard_of) s = label[s];
  return shard_of;
}

uint64_t ShardBalance::max_bytes() const { return bytes.empty() ? 0 : *std::max_element(bytes.begin(), bytes.end()); }
double ShardBalance::mean_bytes() const { return bytes.empty() ? 0.0 : static_cast<double>(total) / bytes.size(); }
double ShardBalance::imbalance() const { return total == 0 ? 1.0 : static_cast<double>(max_bytes()) / mean_bytes(); }

ShardBalance measure_balance(const std::vector<uint64_t>& bytes, const std::vector<uint32_t>& shard_of,
                             uint32_t shards) {
  ShardBalance b;
  b.bytes.assign(shards, 0);
  b.documents.assign(shards, 0);
  for (size_t i = 0; i < bytes.size(); ++i) {
    b.bytes[shard_of[i]] += bytes[i];
    b.documents[shard_of[i]] += 1;
    b.total += bytes[i];
    b.largest_item = std::max(b.largest_item, bytes[i]);
  }
  return b;
}

ShardPlan make_shard_plan(const std::vector<uint64_t>& document_bytes, uint32_t training_shards,
                          uint32_t test_shards, double test_fraction, uint64_t seed) {
  const uint64_t n = document_bytes.size();
  if (n == 0) fail("no documents in the input");
  if (n >= ShardPlan::kTest) fail("{} documents is more than this tool can index", n);
  const uint64_t n_test = test_document_count(n, test_fraction);
  if (n_test < test_shards)
    fail("{} test documents ({} of {}) cannot fill {} test shards; lower --test-shards or raise --test-fraction",
         n_test, test_fraction, n, test_shards);
  if (n_test > 0 && test_shards == 0) fail("{} test documents but no test shards", n_test);
  if (n - n_test < training_shards)
    fail("{} training documents cannot fill {} training shards; lower --training-shards", n - n_test,
         training_shards);

  // The test split and the training split draw on different streams of the seed.
  std::vector<bool> is_test = choose_test_documents(n, n_test, seed);
  std::vector<uint64_t> train_bytes, test_bytes;
  train_bytes.reserve(n - n_test);
  test_bytes.reserve(n_test);
  for (uint64_t i = 0; i < n; ++i) (is_test[i] ? test_bytes : train_bytes).push_back(document_bytes[i]);

  ShardPlan plan;
  std::vector<uint32_t> train_of = balance_by_bytes(train_bytes, training_shards, seed + 1);
  std::vector<uint32_t> test_of;
  if (test_shards > 0) test_of = balance_by_bytes(test_bytes, test_shards, seed + 2);
  plan.training = measure_balance(train_bytes, train_of, training_shards);
  plan.test = measure_balance(test_bytes, test_of, test_shards);

  plan.shard_of.resize(n);
  size_t next_train = 0, next_test = 0;
  for (uint64_t i = 0; i < n; ++i)
    plan.shard_of[i] = is_test[i] ? (ShardPlan::kTest | test_of[next_test++]) : train_of[next_train++];
  return plan;
}

std::string shard_path(const std::string& prefix, const char* split, uint32_t index, uint32_t count) {
  return fmt::format("{}_{}-{:05d}-of-{:05d}.txt", prefix, split, index, count);
}

}  // namespace bk

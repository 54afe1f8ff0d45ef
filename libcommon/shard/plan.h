// The shard plan: which documents go to the test split, and which shard each document lands in.
//
// Everything here works on per-document sizes only (a few bytes per document), never on text, so `shard` can
// plan a split of a whole Wikipedia dump in memory bounded by the document count and then stream the text.
//
//   test split   exactly round(fraction * n) documents: those with the smallest seeded hash of their index
//                (a uniform sample without replacement, independent of the document sizes).
//   balancing    greedy "largest first into the lightest shard" (LPT). Whatever the order, list scheduling puts
//                every document into a shard that held at most the mean, so the heaviest shard ends at most
//                one document above the mean; largest-first makes the gap far smaller in practice.
//   seed         picks the test documents, orders documents of equal size, and numbers the shards (a seeded
//                permutation of shard labels), so a different seed gives a different assignment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

// The number of test documents for n documents and a fraction in [0, 1): round half away from zero.
uint64_t test_document_count(uint64_t documents, double fraction);

// is_test[i] for each of `documents` documents; exactly `count` of them are true.
std::vector<bool> choose_test_documents(uint64_t documents, uint64_t count, uint64_t seed);

// Assigns each item (bytes[i]) to one of `shards` shards; returns the shard of every item.
std::vector<uint32_t> balance_by_bytes(const std::vector<uint64_t>& bytes, uint32_t shards, uint64_t seed);

// Loads and imbalance of an assignment.
struct ShardBalance {
  std::vector<uint64_t> bytes;      // per shard
  std::vector<uint64_t> documents;  // per shard
  uint64_t total = 0, largest_item = 0;
  uint64_t max_bytes() const;
  double mean_bytes() const;
  double imbalance() const;  // max / mean, 1.0 for a perfect split (and for an empty one)
};
ShardBalance measure_balance(const std::vector<uint64_t>& bytes, const std::vector<uint32_t>& shard_of,
                             uint32_t shards);

// The whole plan for one input: split, then balance each split.
struct ShardPlan {
  static constexpr uint32_t kTest = 0x80000000u;  // flag in `shard_of`: the document goes to a test shard
  std::vector<uint32_t> shard_of;  // per document: training shard index, or kTest | test shard index
  ShardBalance training, test;
};
// Throws bk::Error when a split has fewer documents than shards.
ShardPlan make_shard_plan(const std::vector<uint64_t>& document_bytes, uint32_t training_shards,
                          uint32_t test_shards, double test_fraction, uint64_t seed);

// "PREFIX_training-00003-of-00256.txt" (0-based index, at least five digits).
std::string shard_path(const std::string& prefix, const char* split, uint32_t index, uint32_t count);

}  // namespace bk

#include "train/dist/dist_buckets.h"

#include <algorithm>
#include <map>

namespace bk {

std::vector<std::vector<size_t>> plan_buckets(const std::vector<BucketSlot>& slots, size_t bucket_bytes) {
  struct Open {
    std::vector<size_t> members;
    size_t bytes = 0;
    size_t opened = 0;  // index of its first member, to order the leftovers
  };
  std::vector<std::vector<size_t>> buckets;
  std::map<int, Open> open;
  for (size_t i = 0; i < slots.size(); ++i) {
    Open& bucket = open[slots[i].kind];
    if (!bucket.members.empty() && bucket.bytes + slots[i].bytes > bucket_bytes) {
      buckets.push_back(std::move(bucket.members));
      bucket = Open{};
    }
    if (bucket.members.empty()) bucket.opened = i;
    bucket.members.push_back(i);
    bucket.bytes += slots[i].bytes;
  }
  std::vector<Open*> leftovers;
  for (auto& [kind, bucket] : open)
    if (!bucket.members.empty()) leftovers.push_back(&bucket);
  std::sort(leftovers.begin(), leftovers.end(), [](const Open* a, const Open* b) { return a->opened < b->opened; });
  for (Open* bucket : leftovers) buckets.push_back(std::move(bucket->members));
  return buckets;
}

}  // namespace bk

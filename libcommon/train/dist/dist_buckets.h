// Gradient buckets: which tensors are flattened together into one all-reduce.
//
// Every rank must issue the same collectives in the same order, so the plan is a pure function of the tensor
// sizes and kinds (dtype), which are the same on every rank. Tensors of different kinds never share a bucket
// (one flat buffer has one dtype). Torch-free; unit-tested.
#pragma once

#include <cstddef>
#include <vector>

namespace bk {

inline constexpr size_t kDefaultBucketBytes = size_t{25} << 20;  // 25 MiB, as DDP

struct BucketSlot {
  size_t bytes = 0;
  int kind = 0;  // e.g. the scalar type; only equality matters
};

// Groups slot indices, taken in the given order, into buckets of about bucket_bytes: a bucket is closed when the
// next tensor of its kind would take it past bucket_bytes (a tensor larger than bucket_bytes gets a bucket of its
// own). One bucket is open per kind; buckets are listed in the order they close, the still-open ones at the end
// in the order they were opened. Every index appears exactly once. bucket_bytes 0 = one tensor per bucket.
std::vector<std::vector<size_t>> plan_buckets(const std::vector<BucketSlot>& slots, size_t bucket_bytes);

}  // namespace bk

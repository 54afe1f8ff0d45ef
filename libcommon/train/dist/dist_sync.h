// Gradient all-reduce overlapped with the backward pass.
//
// Attached to the model's parameters, it groups them into buckets (in reverse order: the backward pass produces
// the last layers' gradients first) and hooks each parameter's gradient accumulation. Once every gradient of a
// bucket has been accumulated, the bucket is flattened and its all-reduce started while autograd goes on with
// the earlier layers. Buckets are started strictly in bucket order, so every rank issues the same collectives in
// the same order even if hooks fire in a different order. The trainer brackets the backward of each micro-batch:
//
//   bk::GradientSynchronizer sync(*dist, params, /*average=*/true);
//   for (micro = 0; micro < accumulation; ++micro) {
//     sync.prepare(/*sync=*/micro + 1 == accumulation);  // only the last micro-batch communicates
//     loss.backward();
//     sync.finish();  // waits, averages and writes the reduced gradients back into p.grad()
//   }
//
// A parameter that received no gradient on a rank takes part with zeros (and gets a gradient). With one process
// everything is a no-op. The post-accumulate-grad hook slot of each parameter is used (one per tensor in
// LibTorch); the destructor clears it.
#pragma once

#include "train/dist/dist.h"

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

namespace bk {

class GradientSynchronizer {
 public:
  // `wire`: the dtype the buckets travel in, as Dist::allreduce_gradients takes it.
  GradientSynchronizer(Dist& dist, std::vector<at::Tensor> params, bool average = true,
                       size_t bucket_bytes = kDefaultBucketBytes, at::ScalarType wire = at::ScalarType::Undefined);
  ~GradientSynchronizer();
  GradientSynchronizer(const GradientSynchronizer&) = delete;
  GradientSynchronizer& operator=(const GradientSynchronizer&) = delete;

  // Before backward. sync=false (an accumulation step) leaves the gradients local.
  void prepare(bool sync = true);
  // After backward: starts the buckets still waiting, waits for all, writes back. Throws bk::Error if a peer
  // was lost (then the gradients are not usable).
  void finish();

  size_t bucket_count() const;
  // Buckets whose all-reduce was started from inside the last synchronised backward pass (the overlap achieved).
  size_t buckets_started_in_backward() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace bk

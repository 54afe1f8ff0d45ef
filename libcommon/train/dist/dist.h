// The process group of a data-parallel run: c10d's TCPStore for the rendezvous (rank 0 serves it) and Gloo on
// the CPU or NCCL on CUDA for the collectives; a no-op stand-in when there is a single process.
//
//   auto env = bk::detect_dist_env();
//   auto dist = bk::Dist::create(env, device, std::chrono::seconds(300));
//   dist->broadcast_parameters(params);                // rank 0's initial weights everywhere
//   ... backward ...
//   dist->allreduce_gradients(grads, /*average=*/true);  // bucketed, flattened
//
// Every operation is collective: all ranks call it, in the same order, with tensors of the same shapes. A rank
// that dies or stops answering makes the others throw bk::Error (naming the operation, this rank and the
// timeout) instead of hanging: a lost connection is reported at once, silence after `timeout`.
#pragma once

#include "train/dist/dist_buckets.h"
#include "launch/dist_env.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace bk {

enum class ReduceOp { Sum, Max, Min };

class Dist {
 public:
  // An all-reduce in flight (see start_allreduce).
  class Pending {
   public:
    virtual ~Pending() = default;
    // Blocks until done; throws bk::Error if a peer was lost or the timeout passed.
    virtual void wait() = 0;
  };

  // world_size 1 gives the single-process implementation (no store, no sockets). Otherwise connects to the
  // TCPStore at env.master_addr:env.master_port (rank 0 starts it and waits up to `timeout` for the others) and
  // builds a Gloo group (CPU device) or an NCCL group (CUDA device; needs a GPU). `timeout` also bounds every
  // collective.
  static std::unique_ptr<Dist> create(const DistEnv& env, at::Device device, std::chrono::seconds timeout);

  virtual ~Dist() = default;

  int rank() const { return env_.rank; }
  int world() const { return env_.world_size; }
  int local_rank() const { return env_.local_rank; }
  bool is_main() const { return env_.rank == 0; }
  const DistEnv& env() const { return env_; }
  std::chrono::seconds timeout() const { return timeout_; }
  // "gloo", "nccl" or "single".
  virtual std::string backend() const = 0;

  // Rank 0's values copied into every rank's tensors, in place (no autograd history), bucketed.
  virtual void broadcast_parameters(std::vector<at::Tensor>& params) = 0;
  // Sums (average: then divides by world()) each gradient across ranks, in place. The tensors are flattened
  // into buckets of about bucket_bytes (plan_buckets over the given order) so there are few large messages.
  // `wire`: the dtype the buckets travel in (bf16 or fp16 halve the bytes; NVIDIA's
  // allreduce_post_accumulation_fp16), converted back into the gradients' dtype; Undefined: the gradients' own.
  // Every tensor must be defined.
  virtual void allreduce_gradients(std::vector<at::Tensor>& grads, bool average,
                                   size_t bucket_bytes = kDefaultBucketBytes,
                                   at::ScalarType wire = at::ScalarType::Undefined) = 0;
  // One number reduced across ranks (Sum by default).
  virtual double allreduce_scalar(double value, ReduceOp op = ReduceOp::Sum) = 0;
  // In place on one contiguous tensor.
  virtual void allreduce(at::Tensor& tensor, ReduceOp op = ReduceOp::Sum) = 0;
  virtual void barrier() = 0;

  // Starts a Sum all-reduce of one contiguous tensor in place and returns at once; the caller keeps the tensor
  // alive until wait(). Collectives are matched by the order they are started in, on every rank.
  virtual std::unique_ptr<Pending> start_allreduce(at::Tensor& tensor) = 0;

 protected:
  Dist(DistEnv env, std::chrono::seconds timeout) : env_(std::move(env)), timeout_(timeout) {}
  DistEnv env_;
  std::chrono::seconds timeout_;
};

// Flattens `tensors` (same dtype and device) into one new contiguous 1-D tensor, and back.
at::Tensor flatten_tensors(const std::vector<at::Tensor>& tensors);
void unflatten_into(const at::Tensor& flat, const std::vector<at::Tensor>& tensors);

}  // namespace bk

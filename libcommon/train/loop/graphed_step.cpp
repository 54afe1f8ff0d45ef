#include "train/loop/graphed_step.h"

#include "util/error.h"

#ifdef BERTKIT_CUDA_KERNELS
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <optional>
#endif

namespace bk {

#ifdef BERTKIT_CUDA_KERNELS

bool cuda_graphs_built() { return true; }

struct GraphedStep::State {
  int64_t eager_steps = 0, calls = 0;
  std::optional<c10::cuda::CUDAStreamGuard> stream;
  std::optional<at::cuda::CUDAGraph> graph;
  at::Tensor output;
};

GraphedStep::GraphedStep(const at::Device& device, int64_t eager_steps) : state_(std::make_unique<State>()) {
  if (!device.is_cuda()) fail("--cuda-graphs needs a CUDA device, not {}", device.str());
  state_->eager_steps = eager_steps;
  // Work queued so far (the weights' upload, the broadcast) finishes before the loop's stream takes over: that
  // stream does not wait for the default one.
  c10::cuda::device_synchronize();
  state_->stream.emplace(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index()));
}

GraphedStep::~GraphedStep() {
  // The graph's pool is freed with the graph: its replays must be done first.
  if (state_->stream) state_->stream->current_stream().synchronize();
}

at::Tensor GraphedStep::run(const std::function<at::Tensor()>& body) {
  State& s = *state_;
  if (s.calls < s.eager_steps) {
    ++s.calls;
    return body();
  }
  if (!s.graph) {
    // As torch.cuda.graph does: the eager steps' cached blocks go back to the device first, as the capture's pool
    // cannot reuse them and the allocator frees none while a capture is under way.
    c10::cuda::device_synchronize();
    c10::cuda::CUDACachingAllocator::emptyCache();
    s.graph.emplace();
    // Thread-local capture: the data loader's thread may allocate page-locked memory meanwhile, which a global
    // capture would refuse.
    s.graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
      s.output = body();
    } catch (...) {
      try {
        s.graph->capture_end();
      } catch (...) {
      }
      throw;
    }
    s.graph->capture_end();
  }
  s.graph->replay();
  return s.output;
}

bool GraphedStep::captured() const { return state_->graph.has_value(); }

#else

bool cuda_graphs_built() { return false; }

struct GraphedStep::State {};

GraphedStep::GraphedStep(const at::Device&, int64_t) {
  fail("--cuda-graphs: this build has no CUDA graphs (the CUDA toolkit was not found when it was configured)");
}
GraphedStep::~GraphedStep() = default;
at::Tensor GraphedStep::run(const std::function<at::Tensor()>& body) { return body(); }
bool GraphedStep::captured() const { return false; }

#endif

}  // namespace bk

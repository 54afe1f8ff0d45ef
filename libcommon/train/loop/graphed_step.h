// --cuda-graphs: a training step's device work captured once in a CUDA graph and replayed at every later step, so a
// step costs the host one graph launch instead of the ~1,300 kernel launches and operator dispatches of BERT-base.
//
// The captured work must read and write the same memory at every replay, and never wait for the host. So the loop
// keeps everything a step takes in place (the task's micro-batches staged into fixed device tensors, the loss
// denominators and the optimizer's learning rate and bias corrections copied into fixed device tensors before each
// replay), dropout draws from the generator's per-replay seed and offset (ATen's kernels and bertkit's own), and
// the step's statistics are one tensor the graph overwrites, copied to the host after each replay.
//
// What it takes, checked when a run starts (train/loop/loop_setup.cpp): a CUDA device, one process, bf16 or fp32
// (fp16's overflow check decides on the host whether to step), an optimizer whose update reads its scalars on the
// device (LAMB, AdamW), and micro-batches of one shape (the task says which of its modes give them).
//
// As torch.cuda.graph does: the whole training loop runs on a stream of its own (capture needs one other than the
// default stream); the first steps run eagerly on it (cuBLAS and the allocator warm up); the next one is captured,
// in a memory pool of its own, and then replayed.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <memory>

namespace bk {

// Whether this build can capture CUDA graphs (built with the CUDA toolkit's headers, as the kernels are).
bool cuda_graphs_built();

class GraphedStep {
 public:
  // Waits for the device, then makes the loop's stream current on this thread until destruction.
  explicit GraphedStep(const at::Device& device, int64_t eager_steps = 3);
  ~GraphedStep();
  GraphedStep(const GraphedStep&) = delete;
  GraphedStep& operator=(const GraphedStep&) = delete;

  // Runs one step's device work `body`, which returns the tensor the caller reads afterwards: eagerly for the first
  // eager_steps calls, then captured once, and from then on by replaying the graph. After the capture the same
  // tensor comes back every time, overwritten by each replay.
  at::Tensor run(const std::function<at::Tensor()>& body);
  bool captured() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace bk

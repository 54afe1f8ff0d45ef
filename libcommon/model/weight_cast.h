// Groups of weights cast to autocast's dtype in one multi-tensor launch each, with their gradients cast back in one.
// Autocast casts each weight with a launch of its own in forward and again in backward, which comes to about 800
// small kernels and as many host operators a step at BERT-large. The encoder casts each layer's 16 weights in three
// groups (model/encoder.cpp), so a layer takes three launches each way. The values are the same: the same
// round-to-nearest casts (tests/torch_unit/test_weight_cast.cpp). On the CPU, where _foreach_copy_ copies tensor by
// tensor, what is saved is host operators and autograd nodes.
#pragma once

#include <ATen/Tensor.h>

#include <vector>

namespace bk {

// `weights` as autocast hands them to its ops. Where autocast is on for the first weight's device, the weights it
// would cast come back cast, as the outputs of one autograd node: those sharing the first such weight's device,
// dtype and requires_grad (any others come back as they are, for autocast to cast). Elsewhere every weight comes
// back unchanged.
std::vector<at::Tensor> autocast_weights(const std::vector<at::Tensor>& weights);

// The concatenation along dim 0 of each run of `weights` (run_lengths: how many consecutive weights each run takes,
// summing to their count; the weights of a run share their other sizes), cast as autocast_weights casts them. Where
// the whole list is cast as one group, the casts write into the concatenations themselves, in the group's one
// launch, and their gradients are split back in its backward, so no concatenation runs (the encoder's fused QKV
// weight and bias: before, a cat of each in every layer and step, 48 small kernels and their autograd nodes).
// Elsewhere each run is concatenated after its weights are cast, or as they are without autocast.
std::vector<at::Tensor> autocast_concatenated(const std::vector<at::Tensor>& weights,
                                              const std::vector<int64_t>& run_lengths);

// Process-wide, on by default. Off gives autocast's own per-weight casts, which the test compares with.
void set_grouped_weight_casts(bool on);

}  // namespace bk

// A group of weights cast to autocast's dtype in one multi-tensor launch, with their gradients cast back in one.
// Autocast casts each weight with a launch of its own in forward and again in backward, which comes to about 800
// small kernels and as many host operators a step at BERT-large. The encoder casts each layer's 16 weights as one
// group (model/encoder.cpp), which makes it one launch each way per layer. The values are the same: the same
// round-to-nearest casts (tests/torch_unit/test_weight_cast.cpp).
#pragma once

#include <ATen/Tensor.h>

#include <vector>

namespace bk {

// `weights` as autocast hands them to its ops. Where autocast is on for the first weight's device, floating-point
// weights of another dtype come back cast to autocast's dtype, as the outputs of one autograd node: those sharing
// the first such weight's device and dtype (any others come back as they are, for autocast to cast). Elsewhere
// every weight comes back unchanged.
std::vector<at::Tensor> autocast_weights(const std::vector<at::Tensor>& weights);

// Process-wide, on by default. Off gives autocast's own per-weight casts, which the test compares with.
void set_grouped_weight_casts(bool on);
bool grouped_weight_casts_enabled();

}  // namespace bk

#include "model/fused_gelu.h"

#include "model/cuda_kernels.h"
#include "model/kernel_switches.h"
#include "model/parameters.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>

#ifdef BERTKIT_CUDA_KERNELS
#include "kernels/bias_gelu.h"

#include <c10/cuda/CUDAGuard.h>
#endif

namespace bk {

namespace {

#ifdef BERTKIT_CUDA_KERNELS

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class BiasGelu : public torch::autograd::Function<BiasGelu> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& bias) {
    const c10::cuda::CUDAGuard on_device(input.device());  // the input's stream, not the current device's
    const at::Tensor in = input.contiguous(), b = bias.contiguous();
    at::Tensor out = at::empty_like(in);
    kernels::BiasGeluForward a;
    a.input = in.data_ptr();
    a.bias = b.data_ptr();
    a.out = out.data_ptr();
    a.cols = in.size(-1);
    a.rows = in.numel() / std::max<int64_t>(a.cols, 1);
    check_launch(kernels::bias_gelu_forward(half_type(in), a, current_stream()), "bias+GELU forward");
    ctx->save_for_backward({in, b});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &in = saved[0], &b = saved[1];
    const at::Tensor dy = kernel_input(grads[0], in.scalar_type());
    const int64_t cols = in.size(-1), rows = in.numel() / std::max<int64_t>(cols, 1);
    const int64_t blocks = kernels::bias_gelu_backward_blocks(rows);
    at::Tensor grad_input = at::empty_like(in);
    at::Tensor partial = at::empty({std::max<int64_t>(blocks, 1), cols}, in.options().dtype(at::kFloat));
    if (blocks == 0) partial.zero_();
    kernels::BiasGeluBackward a;
    a.grad_out = dy.data_ptr();
    a.input = in.data_ptr();
    a.bias = b.data_ptr();
    a.grad_input = grad_input.data_ptr();
    a.bias_partial = partial.data_ptr<float>();
    a.rows = rows;
    a.cols = cols;
    check_launch(kernels::bias_gelu_backward(half_type(in), a, current_stream()), "bias+GELU backward");
    return {grad_input, partial.sum(0).to(b.scalar_type())};
  }
};

// Whether the kernel takes gelu(x W^T + b) with b: [cols] (x W^T computed, or to be, in the kernel's dtype).
bool kernel_applies(const at::Tensor& x, const at::Tensor& b) {
  return experimental_kernels_enabled() && b.dim() == 1 && kernel_dtype(x, {b}) != at::ScalarType::Undefined &&
         kernels::bias_gelu_supports(b.size(0));
}

#endif  // BERTKIT_CUDA_KERNELS

}  // namespace

at::Tensor bias_gelu(const at::Tensor& input, const at::Tensor& bias) {
#ifdef BERTKIT_CUDA_KERNELS
  if (kernel_applies(input, bias) && input.size(-1) == bias.size(0)) {
    const at::Tensor b = autocast_weight(bias, input);
    if (kernel_can_take(b, input) && kernel_can_read(input)) {
      const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
      return BiasGelu::apply(input, b);
    }
  }
#endif
  return at::gelu(input + autocast_weight(bias, input));
}

at::Tensor dense_activation(const std::string& hidden_act, const at::Tensor& x, const at::Tensor& w,
                            const at::Tensor& b) {
#ifdef BERTKIT_CUDA_KERNELS
  if (hidden_act == "gelu" && kernel_applies(x, b)) return bias_gelu(at::linear(x, w), b);
#endif
  return bert_activation(hidden_act, at::linear(x, w, b));
}

}  // namespace bk

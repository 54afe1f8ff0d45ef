// What the fused kernels' autograd Functions (model/fused_layer_norm.cpp, model/fused_gelu.cpp) take from
// LibTorch's custom Function, checked on the CPU, where those Functions cannot run (their forward launches CUDA
// kernels): an optional tensor argument passed as std::nullopt, and a second output that aliases the first so that
// backward receives the gradients of two uses apart, undefined where a use has none. A Function built the same way
// with ATen ops stands in for them.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <doctest/doctest.h>

#include <optional>

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// y = 3 (x + bias), returned once or twice (the second an alias); backward records which gradients arrived and
// whether an undefined tensor saved for it (the kernels' dropout mask at p = 0) came back undefined.
struct Arrived {
  bool first = false, second = false, saved_undefined = false;
};
Arrived arrived;

class ScaleTwice : public torch::autograd::Function<ScaleTwice> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const std::optional<at::Tensor>& bias,
                               bool twice) {
    const at::Tensor y = (bias.has_value() ? x + *bias : x) * 3;
    ctx->saved_data["bias"] = bias.has_value();
    ctx->save_for_backward({at::Tensor()});
    ctx->set_materialize_grads(false);
    if (!twice) return {y};
    return {y, y.view_as(y)};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    at::Tensor dy = grads[0], dy2 = grads.size() > 1 ? grads[1] : at::Tensor();
    arrived = {dy.defined(), dy2.defined(), !ctx->get_saved_variables()[0].defined()};
    if (!dy.defined()) std::swap(dy, dy2);
    if (!dy.defined()) return variable_list(3);
    const at::Tensor dx = (dy2.defined() ? dy + dy2 : dy) * 3;
    const bool with_bias = ctx->saved_data["bias"].toBool();
    return {dx, with_bias ? dx.sum(0) : at::Tensor(), at::Tensor()};
  }
};

}  // namespace

TEST_CASE("custom Function: an optional argument given as nullopt takes no gradient") {
  const at::Tensor x = at::arange(6, at::kFloat).reshape({2, 3}).requires_grad_(true);
  // As the kernels' wrappers pass it: a named optional, empty or holding the bias.
  std::optional<at::Tensor> bias;
  const at::Tensor y = ScaleTwice::apply(x, bias, false)[0];
  CHECK(at::equal(y, x.detach() * 3));
  y.sum().backward();
  CHECK(at::equal(x.grad(), at::full({2, 3}, 3.0f)));
  CHECK(arrived.saved_undefined);

  bias = at::ones({3}).requires_grad_(true);
  x.mutable_grad().reset();
  ScaleTwice::apply(x, bias, false)[0].sum().backward();
  CHECK(at::equal(bias->grad(), at::full({3}, 6.0f)));  // two rows of 3
}

TEST_CASE("custom Function: an aliased second output brings its own gradient, undefined where unused") {
  const at::Tensor x = at::ones({2, 3}).requires_grad_(true);
  const at::Tensor w1 = at::full({2, 3}, 2.0f), w2 = at::full({2, 3}, 5.0f);

  auto outputs = ScaleTwice::apply(x, std::nullopt, true);
  REQUIRE(outputs.size() == 2);
  CHECK(outputs[1].data_ptr() == outputs[0].data_ptr());  // one tensor's memory, two autograd outputs
  ((outputs[0] * w1).sum() + (outputs[1] * w2).sum()).backward();
  CHECK(arrived.first);
  CHECK(arrived.second);
  CHECK(at::equal(x.grad(), at::full({2, 3}, 21.0f)));  // 3 (2 + 5): the two uses' gradients added in backward

  // One use alone: the other gradient arrives undefined (not as zeros), whichever it is.
  for (const size_t used : {0, 1}) {
    CAPTURE(used);
    x.mutable_grad().reset();
    outputs = ScaleTwice::apply(x, std::nullopt, true);
    const at::Tensor& w = used == 0 ? w1 : w2;
    (outputs[used] * w).sum().backward();
    CHECK(arrived.first == (used == 0));
    CHECK(arrived.second == (used == 1));
    CHECK(at::equal(x.grad(), w * 3));
  }
}

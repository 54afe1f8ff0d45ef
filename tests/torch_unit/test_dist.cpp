// The single-process group: every collective is the identity, and flattening round-trips.
#include "train/dist/dist.h"
#include "util/error.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>

TEST_CASE("one process: every collective leaves the values alone") {
  auto dist = bk::Dist::create(bk::DistEnv{}, at::Device(at::kCPU), std::chrono::seconds(5));
  CHECK(dist->backend() == "single");
  CHECK(dist->is_main());
  CHECK(dist->world() == 1);
  std::vector<at::Tensor> grads{at::arange(6, at::kFloat).view({2, 3}), at::ones({4}, at::kDouble)};
  auto before = grads[0].clone();
  dist->allreduce_gradients(grads, /*average=*/true);
  CHECK(at::equal(grads[0], before));
  CHECK(dist->allreduce_scalar(2.5) == 2.5);
  dist->broadcast_parameters(grads);
  dist->barrier();
  CHECK(at::equal(grads[0], before));
  CHECK_THROWS_AS(bk::Dist::create(bk::DistEnv{}, at::Device(at::kCPU), std::chrono::seconds(0)), bk::UsageError);
}

TEST_CASE("flatten and unflatten") {
  std::vector<at::Tensor> ts{at::arange(6, at::kFloat).view({2, 3}), at::arange(6, 10, at::kFloat)};
  auto flat = bk::flatten_tensors(ts);
  CHECK(flat.dim() == 1);
  CHECK(at::equal(flat, at::arange(10, at::kFloat)));
  flat.mul_(2);
  bk::unflatten_into(flat, ts);
  CHECK(at::equal(ts[0], at::arange(0, 12, 2, at::kFloat).view({2, 3})));
  CHECK(at::equal(ts[1], at::arange(12, 20, 2, at::kFloat)));
}

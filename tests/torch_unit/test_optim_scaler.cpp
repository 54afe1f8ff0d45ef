// Dynamic loss scaling on CPU tensors: unscaling, growth after growth_interval finite steps, backoff and skip
// on inf/NaN, collapse below min_scale, NaN loss, state round trip.
#include "train/optim/grad_scaler.h"

#include "util/error.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include <limits>

namespace {

bk::LossScalerConfig small_config(double init, int64_t interval) {
  bk::LossScalerConfig c;
  c.init_scale = init;
  c.growth_interval = interval;
  return c;
}

at::Tensor finite_grads() { return at::tensor(std::vector<float>{16, -32}); }
at::Tensor grads_with(float bad) { return at::tensor(std::vector<float>{16, bad}); }

}  // namespace

TEST_CASE("loss scaler: scales the loss and unscales finite gradients") {
  bk::LossScaler scaler(small_config(8, 3), at::Device("cpu"));
  CHECK(scaler.scale() == 8.0);
  CHECK(scaler.scale_loss(at::scalar_tensor(1.5)).item<double>() == 12.0);
  at::Tensor g = finite_grads(), h = at::tensor(std::vector<float>{4});
  CHECK(scaler.unscale({g, at::Tensor(), h}));
  CHECK(at::equal(g, at::tensor(std::vector<float>{2, -4})));
  CHECK(h.item<float>() == 0.5f);
  scaler.update();
  CHECK(scaler.scale() == 8.0);
}

TEST_CASE("loss scaler: grows after growth_interval finite steps, backs off and skips on overflow") {
  bk::LossScaler scaler(small_config(8, 3), at::Device("cpu"));
  for (int i = 0; i < 2; ++i) {
    CHECK(scaler.unscale({finite_grads()}));
    scaler.update();
    CHECK(scaler.scale() == 8.0);
  }
  CHECK(scaler.unscale({finite_grads()}));
  scaler.update();
  CHECK(scaler.scale() == 16.0);  // third finite step in a row

  CHECK_FALSE(scaler.unscale({finite_grads(), grads_with(std::numeric_limits<float>::infinity())}));
  scaler.update();
  CHECK(scaler.scale() == 8.0);
  CHECK(scaler.skipped_steps() == 1);
  CHECK(scaler.consecutive_overflows() == 1);

  CHECK_FALSE(scaler.unscale({grads_with(std::numeric_limits<float>::quiet_NaN())}));
  scaler.update();
  CHECK(scaler.scale() == 4.0);
  CHECK(scaler.skipped_steps() == 2);
  CHECK(scaler.consecutive_overflows() == 2);

  // An overflow resets the growth count: two finite steps are not enough to grow again, three are.
  for (int i = 0; i < 2; ++i) {
    CHECK(scaler.unscale({finite_grads()}));
    scaler.update();
  }
  CHECK(scaler.scale() == 4.0);
  CHECK(scaler.consecutive_overflows() == 0);
  CHECK(scaler.unscale({finite_grads()}));
  scaler.update();
  CHECK(scaler.scale() == 8.0);
  CHECK(scaler.skipped_steps() == 2);
}

TEST_CASE("loss scaler: a scale falling below min_scale stops training") {
  bk::LossScaler scaler(small_config(2, 2000), at::Device("cpu"));
  const float inf = std::numeric_limits<float>::infinity();
  CHECK_FALSE(scaler.unscale({grads_with(inf)}));
  scaler.update();  // 2 -> 1: still allowed
  CHECK(scaler.scale() == 1.0);
  CHECK_FALSE(scaler.unscale({grads_with(inf)}));
  CHECK_THROWS_WITH_AS(scaler.update(), doctest::Contains("loss scale collapsed to 0.5 after 2 consecutive overflowing steps"),
                       bk::Error);
}

TEST_CASE("loss scaler: disabled scales by 1 and never skips") {
  bk::LossScalerConfig c;
  c.enabled = false;
  bk::LossScaler scaler(c, at::Device("cpu"));
  at::Tensor g = grads_with(std::numeric_limits<float>::infinity());
  CHECK(scaler.scale_loss(at::scalar_tensor(3.0)).item<double>() == 3.0);
  CHECK(scaler.unscale({g}));
  CHECK(g[0].item<float>() == 16.0f);
  scaler.update();
  CHECK(scaler.scale() == 1.0);
}

TEST_CASE("loss scaler: misuse and state round trip") {
  bk::LossScaler scaler(small_config(8, 3), at::Device("cpu"));
  CHECK_THROWS_AS(scaler.update(), bk::Error);  // update without unscale
  CHECK(scaler.unscale({finite_grads()}));
  CHECK_THROWS_AS(scaler.unscale({finite_grads()}), bk::Error);
  scaler.update();
  CHECK_FALSE(scaler.unscale({grads_with(std::numeric_limits<float>::infinity())}));
  scaler.update();
  CHECK(scaler.unscale({finite_grads()}));
  scaler.update();  // scale 4, one finite step since the overflow

  bk::LossScaler restored(small_config(8, 3), at::Device("cpu"));
  restored.load_state(scaler.state());
  CHECK(restored.scale() == 4.0);
  CHECK(restored.skipped_steps() == 1);
  for (bk::LossScaler* s : {&scaler, &restored}) {
    for (int i = 0; i < 2; ++i) {
      CHECK(s->unscale({finite_grads()}));
      s->update();
    }
    CHECK(s->scale() == 8.0);  // the growth count travelled with the state
  }
  CHECK_THROWS_AS(restored.load_state({}), bk::Error);
}

TEST_CASE("check_loss_finite names the step") {
  CHECK_NOTHROW(bk::check_loss_finite(2.5, 3));
  CHECK_THROWS_WITH_AS(bk::check_loss_finite(std::numeric_limits<double>::quiet_NaN(), 7), "loss is NaN at step 7",
                       bk::Error);
  CHECK_THROWS_WITH_AS(bk::check_loss_finite(std::numeric_limits<double>::infinity(), 8),
                       "loss is infinite at step 8", bk::Error);
}

TEST_CASE("loss scaler: a fixed scale never moves, and an overflowing step is still skipped") {
  bk::LossScalerConfig c = bk::LossScalerConfig::fixed(128);
  c.growth_interval = 2;
  bk::LossScaler scaler(c, at::Device("cpu"));
  for (int i = 0; i < 5; ++i) {
    at::Tensor g = finite_grads();
    CHECK(scaler.unscale({g}));
    scaler.update();
    CHECK(scaler.scale() == 128.0);  // no growth after growth_interval finite steps
  }
  for (int i = 0; i < 3; ++i) {
    at::Tensor g = grads_with(std::numeric_limits<float>::infinity());
    CHECK_FALSE(scaler.unscale({g}));  // skipped
    scaler.update();
    CHECK(scaler.scale() == 128.0);  // no backoff, no collapse
  }
  CHECK(scaler.skipped_steps() == 3);
}

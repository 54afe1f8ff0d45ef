// The learning-rate schedule at chosen steps, worked by hand from NVIDIA's PolyWarmUpScheduler and
// LinearWarmUpScheduler formulas (schedule.h).
#include "train/optim/schedule.h"

#include "util/error.h"

#include <doctest/doctest.h>

#include <cmath>

TEST_CASE("poly schedule: linear warm-up, then (1 - p)^0.5") {
  // total 100, warm-up 10%: p = step / 100.
  CHECK(bk::lr_at(0, 1.0, 100, 0.1) == 0.0);
  CHECK(bk::lr_at(1, 1.0, 100, 0.1) == doctest::Approx(0.1));
  CHECK(bk::lr_at(5, 1.0, 100, 0.1) == doctest::Approx(0.5));
  CHECK(bk::lr_at(9, 2.0, 100, 0.1) == doctest::Approx(1.8));
  CHECK(bk::lr_at(10, 1.0, 100, 0.1) == doctest::Approx(std::sqrt(0.9)));  // warm-up ends: p = w is decay
  CHECK(bk::lr_at(64, 1.0, 100, 0.1) == doctest::Approx(0.6));
  CHECK(bk::lr_at(91, 1.0, 100, 0.1) == doctest::Approx(0.3));
  CHECK(bk::lr_at(100, 1.0, 100, 0.1) == 0.0);
  CHECK(bk::lr_at(150, 1.0, 100, 0.1) == 0.0);  // past the end: 0, not NaN
  CHECK(bk::lr_at(75, 1.0, 100, 0.1, 1.0) == doctest::Approx(0.25));  // degree 1
  CHECK(bk::lr_at(50, 1.0, 100, 0.0) == doctest::Approx(std::sqrt(0.5)));  // no warm-up
}

TEST_CASE("poly schedule with NVIDIA's phase-1 settings") {
  // lr 6e-3, 7038 steps, warm-up 28.43%: the first update uses 6e-3 * (1 / 7038) / 0.2843.
  CHECK(bk::lr_at(1, 6e-3, 7038, 0.2843) == doctest::Approx(6e-3 / 7038 / 0.2843).epsilon(1e-12));
  CHECK(bk::lr_at(2001, 6e-3, 7038, 0.2843) == doctest::Approx(6e-3 * std::sqrt(1 - 2001.0 / 7038)).epsilon(1e-12));
}

TEST_CASE("linear schedule: warm-up, then a straight line to 0 at the end") {
  bk::LrSchedule s{1.0, 100, 0.1, 0.5, bk::LrDecay::linear};
  CHECK(s.at(5) == doctest::Approx(0.5));
  CHECK(s.at(10) == doctest::Approx(1.0));
  CHECK(s.at(55) == doctest::Approx(0.5));
  CHECK(s.at(100) == 0.0);
  CHECK(s.at(200) == 0.0);
  CHECK(bk::find_choice(bk::kLrDecays, "linear") == bk::LrDecay::linear);
  CHECK(bk::find_choice(bk::kLrDecays, "poly") == bk::LrDecay::poly);
  CHECK(!bk::find_choice(bk::kLrDecays, "cosine"));
  CHECK(std::string(bk::choice_name(bk::kLrDecays, bk::LrDecay::linear)) == "linear");
}

TEST_CASE("schedule validation") {
  CHECK_NOTHROW(bk::LrSchedule{}.validate());
  CHECK_THROWS_AS((bk::LrSchedule{1.0, 0, 0.1}.validate()), bk::Error);
  CHECK_THROWS_AS((bk::LrSchedule{1.0, 10, 1.5}.validate()), bk::Error);
  CHECK_THROWS_AS((bk::LrSchedule{-1.0, 10, 0.1}.validate()), bk::Error);
}

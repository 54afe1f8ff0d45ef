// The learning-rate schedule at chosen steps, worked by hand from NVIDIA's PolyWarmUpScheduler and
// LinearWarmUpScheduler formulas, HF's cosine, and warm-up-stable-decay (schedule.h).
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
  CHECK(bk::find_choice(bk::kLrDecays, "1-sqrt") == bk::LrDecay::one_minus_sqrt);
  CHECK(!bk::find_choice(bk::kLrDecays, "exponential"));
  CHECK(std::string(bk::choice_name(bk::kLrDecays, bk::LrDecay::linear)) == "linear");
}

TEST_CASE("schedule validation") {
  CHECK_NOTHROW(bk::LrSchedule{}.validate());
  CHECK_THROWS_AS((bk::LrSchedule{1.0, 0, 0.1}.validate()), bk::Error);
  CHECK_THROWS_AS((bk::LrSchedule{1.0, 10, 1.5}.validate()), bk::Error);
  CHECK_THROWS_AS((bk::LrSchedule{-1.0, 10, 0.1}.validate()), bk::Error);
}

TEST_CASE("cosine and 1-sqrt over the whole run after the warm-up") {
  // total 100, warm-up 20%: q = (p - 0.2) / 0.8.
  bk::LrSchedule cosine{2.0, 100, 0.2, 0.5, bk::LrDecay::cosine};
  CHECK(cosine.at(10) == doctest::Approx(1.0));                  // warm-up
  CHECK(cosine.at(20) == doctest::Approx(2.0));                  // q = 0
  CHECK(cosine.at(60) == doctest::Approx(1.0));                  // q = 0.5: half the peak
  CHECK(cosine.at(40) == doctest::Approx(1 + std::cos(M_PI / 4)));  // q = 0.25
  CHECK(cosine.at(100) == doctest::Approx(0.0));
  bk::LrSchedule root{2.0, 100, 0.2, 0.5, bk::LrDecay::one_minus_sqrt};
  CHECK(root.at(40) == doctest::Approx(2.0 * (1 - 0.5)));  // q = 0.25
  CHECK(root.at(100) == 0.0);
}

TEST_CASE("warm-up-stable-decay: the peak until the last N steps, then each shape over them") {
  // total 1000, warm-up 10% (100 steps), decay over the last 200 (steps 801..1000): q = (step - 800) / 200.
  for (auto decay : {bk::LrDecay::poly, bk::LrDecay::linear, bk::LrDecay::cosine, bk::LrDecay::one_minus_sqrt}) {
    CAPTURE(bk::choice_name(bk::kLrDecays, decay));
    bk::LrSchedule s{1.0, 1000, 0.1, 0.5, decay, 200};
    CHECK(s.stable_until() == 800);
    CHECK(s.at(50) == doctest::Approx(0.5));  // warm-up as ever
    CHECK(s.at(100) == 1.0);
    CHECK(s.at(500) == 1.0);
    CHECK(s.at(800) == 1.0);  // the last step at the peak
    CHECK(s.at(801) < 1.0);
    CHECK(s.at(1000) == doctest::Approx(0.0));
    CHECK(s.at(1200) == doctest::Approx(0.0));
  }
  CHECK(bk::LrSchedule{1.0, 1000, 0.1, 0.5, bk::LrDecay::linear, 200}.at(900) == doctest::Approx(0.5));
  CHECK(bk::LrSchedule{1.0, 1000, 0.1, 0.5, bk::LrDecay::poly, 200}.at(900) == doctest::Approx(std::sqrt(0.5)));
  CHECK(bk::LrSchedule{1.0, 1000, 0.1, 0.5, bk::LrDecay::cosine, 200}.at(850) ==
        doctest::Approx((1 + std::cos(M_PI / 4)) / 2));
  CHECK(bk::LrSchedule{1.0, 1000, 0.1, 0.5, bk::LrDecay::one_minus_sqrt, 200}.at(850) == doctest::Approx(0.5));
  // A decay phase alone (its own run from a stable phase's checkpoint): no warm-up, decay from the first step.
  bk::LrSchedule alone{1.0, 100, 0.0, 0.5, bk::LrDecay::linear, 100};
  CHECK(alone.at(1) == doctest::Approx(0.99));
  CHECK(alone.at(50) == doctest::Approx(0.5));
}

TEST_CASE("constant: the peak after the warm-up, to the end and past it") {
  bk::LrSchedule s{2.0, 100, 0.1, 0.5, bk::LrDecay::constant};
  CHECK(s.at(5) == doctest::Approx(1.0));
  CHECK(s.at(10) == 2.0);
  CHECK(s.at(100) == 2.0);
  CHECK(s.at(150) == 2.0);
  CHECK_THROWS_AS((bk::LrSchedule{2.0, 100, 0.1, 0.5, bk::LrDecay::constant, 10}.validate()), bk::Error);
}

TEST_CASE("a decay phase must fit after the warm-up") {
  CHECK_NOTHROW((bk::LrSchedule{1.0, 100, 0.1, 0.5, bk::LrDecay::poly, 90}.validate()));
  CHECK_THROWS_WITH_AS((bk::LrSchedule{1.0, 100, 0.1, 0.5, bk::LrDecay::poly, 91}.validate()),
                       "learning-rate schedule: the warm-up (10 steps) runs into the decay phase (the last 91 of 100 "
                       "steps)", bk::Error);
  CHECK_THROWS_AS((bk::LrSchedule{1.0, 100, 0.0, 0.5, bk::LrDecay::poly, 101}.validate()), bk::Error);
}

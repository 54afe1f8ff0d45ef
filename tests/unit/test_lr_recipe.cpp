#include <doctest/doctest.h>

#include "model_config/bert_config.h"
#include "tasks/lr_recipe.h"
#include "util/error.h"

#include <cmath>

using namespace bk;

namespace {

BertConfig shape(int64_t layers, int64_t hidden) {
  BertConfig c;
  c.num_hidden_layers = layers;
  c.hidden_size = hidden;
  return c;
}

}  // namespace

TEST_CASE("learning-rate recipes: NVIDIA's for BERT-base and larger, by phase, square-root scaled below its batch") {
  const BertConfig large = shape(24, 1024), base = shape(12, 768);
  CHECK(pretraining_learning_rate(large, OptimizerKind::lamb, 65536, 128).value == doctest::Approx(6e-3));
  CHECK(pretraining_learning_rate(base, OptimizerKind::lamb, 65536, 0).value == doctest::Approx(6e-3));
  CHECK(pretraining_learning_rate(large, OptimizerKind::lamb, 32768, 512).value == doctest::Approx(4e-3));
  // 256 of 65536: a sixteenth of the rate; a larger batch than the recipe's keeps it.
  CHECK(pretraining_learning_rate(base, OptimizerKind::lamb, 256, 128).value == doctest::Approx(6e-3 / 16));
  CHECK(pretraining_learning_rate(base, OptimizerKind::lamb, 131072, 128).value == doctest::Approx(6e-3));
  const LearningRate phase2 = pretraining_learning_rate(large, OptimizerKind::lamb, 512, 512);
  CHECK(phase2.value == doctest::Approx(4e-3 * std::sqrt(512.0 / 32768)));
  CHECK(phase2.source == "NVIDIA's LAMB phase-2 recipe for BERT-base/large: 0.004 at global batch 32768, "
                         "square-root scaled to batch 512");
  CHECK(pretraining_learning_rate(base, OptimizerKind::adamw, 256, 128).value == doctest::Approx(1e-4));
}

TEST_CASE("learning-rate recipes: the measured one for small models; none for acclip and madgrad") {
  const BertConfig tiny = shape(2, 128), wide_but_shallow = shape(4, 768), deep_but_narrow = shape(12, 512);
  for (const BertConfig& small : {tiny, wide_but_shallow, deep_but_narrow}) {
    CHECK(pretraining_learning_rate(small, OptimizerKind::lamb, 32, 128).value == doctest::Approx(kSmallLambRate));
    CHECK(pretraining_learning_rate(small, OptimizerKind::adamw, 32, 128).value == doctest::Approx(kSmallAdamwRate));
  }
  CHECK(pretraining_learning_rate(tiny, OptimizerKind::lamb, 8, 128).value == doctest::Approx(kSmallLambRate / 2));
  CHECK_THROWS_WITH_AS(pretraining_learning_rate(tiny, OptimizerKind::madgrad, 32, 128),
                       "--optimizer madgrad needs --learning-rate: there is no published BERT recipe to take it from",
                       UsageError);
  CHECK(finetuning_learning_rate().value == doctest::Approx(5e-5));
}

TEST_CASE("learning-rate recipes: continued pretraining, any model: AdamW 5e-5 and LAMB 3e-4 at 32, 6% warm-up") {
  const LearningRate adamw = continued_pretraining_learning_rate(OptimizerKind::adamw, 32);
  CHECK(adamw.value == doctest::Approx(5e-5));
  CHECK(adamw.warmup_proportion == doctest::Approx(0.06));
  CHECK(adamw.source.find("run_pretraining.py") != std::string::npos);
  CHECK(continued_pretraining_learning_rate(OptimizerKind::adamw, 8).value == doctest::Approx(2.5e-5));
  CHECK(continued_pretraining_learning_rate(OptimizerKind::lamb, 256).value == doctest::Approx(3e-4));
  CHECK(continued_pretraining_learning_rate(OptimizerKind::lamb, 16).value == doctest::Approx(3e-4 / std::sqrt(2.0)));
  // The fresh-weights recipes keep their warm-up (the loop's default).
  CHECK(pretraining_learning_rate(shape(2, 128), OptimizerKind::lamb, 32, 128).warmup_proportion ==
        doctest::Approx(0.01));
  CHECK_THROWS_AS(continued_pretraining_learning_rate(OptimizerKind::madgrad, 32), UsageError);
}

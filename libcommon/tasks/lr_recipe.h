// The peak learning rate a run takes when --learning-rate is not given: the published recipe that fits the model
// and the optimizer, scaled to the run's global batch, and where it comes from, for the start banner. Torch-free.
//
// Pretraining (bert-train):
//   BERT-base and larger (hidden >= 768, >= 12 layers), LAMB: NVIDIA DeepLearningExamples' BERT recipe
//     (scripts/run_pretraining.sh): 6e-3 at global batch 65536 for rows of up to 128 tokens (phase 1), 4e-3 at
//     32768 for longer rows (phase 2).
//   BERT-base and larger, AdamW: the BERT paper's (Devlin et al. 2019, appendix A.2): 1e-4 at batch 256.
//   Smaller models (Google's 24 small BERTs, the demo's), LAMB: kSmallLambRate at batch 32, and AdamW:
//     kSmallAdamwRate at batch 32, measured on this project's demo corpus (DESIGN.md section 4).
//   StableAdamW: AdamW's rates above (none is published for BERT), and the banner says so.
//   ModernBERT, StableAdamW and AdamW: its paper's StableAdamW peak rates (Warner et al. 2024): 8e-4 for base,
//     5e-4 for large
//     (hidden >= 1024), at global batch 4,608. LAMB: no rate is published for ModernBERT; BERT's LAMB rate of the
//     same size applies, and the banner says so.
// A smaller global batch than the recipe's scales the rate by the square root of the ratio (the LAMB paper's rule,
// You et al. 2020); a larger one keeps the recipe's rate. acclip and madgrad have no published BERT recipe: a run
// with them must give --learning-rate.
// Continued pretraining (bert-train --init-checkpoint of a model from elsewhere, without --init-optimizer: a
// trained model on new text, as BioBERT, FinBERT and run_mlm.py do it): the rates of fresh weights erase what the
// model knew. (A bert-train checkpoint's next phase keeps the recipes above.) AdamW and StableAdamW: 5e-5 at
// batch 32, google-research/bert run_pretraining.py's defaults (and run_mlm.py's rate); LAMB: kContinuedLambRate
// at batch 32, measured as the rate whose drift matches AdamW's (DESIGN.md section 4). Warm-up: 6% of the steps,
// Gururangan et al. 2020's domain-adaptive pretraining.
// Fine-tuning (bert-finetune): 5e-5, the default of Google's run_classifier.py and run_squad.py.
#pragma once

#include "model_config/bert_config.h"
#include "train/loop/learning_rate.h"
#include "train/optim/optimizer_kind.h"

#include <cstdint>
#include <string>

namespace bk {

inline constexpr double kSmallLambRate = 1e-2;
inline constexpr double kSmallAdamwRate = 1e-3;

// bk::UsageError for an optimizer without a recipe. max_length: the longest row the data holds (0: not known,
// taken as phase 1).
LearningRate pretraining_learning_rate(const BertConfig& model, OptimizerKind optimizer, int64_t global_batch,
                                       int64_t max_length);
inline constexpr double kContinuedLambRate = 3e-4;
inline constexpr double kContinuedWarmupProportion = 0.06;
LearningRate continued_pretraining_learning_rate(OptimizerKind optimizer, int64_t global_batch);
LearningRate finetuning_learning_rate();

}  // namespace bk

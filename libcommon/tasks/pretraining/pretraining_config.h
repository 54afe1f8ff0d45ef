// The pretraining task's settings (what bert-train's --config, --input, --max-predictions and --global-data-order
// set). Torch-free.
#pragma once

#include "util/choices.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bk {

// bert-train --masking: static (the data's masks) or dynamic (drawn by the loader; unmasked data).
inline constexpr Choice<bool> kTrainMasking[] = {{"static", false}, {"dynamic", true}};

struct PretrainingConfig {
  std::string config_path;           // bert_config.json, or a preset name (model_config/config_presets.h)
  // A preset's vocabulary size: vocab_size if set (--vocab-size), else the size of vocab_path (--vocab), else the
  // preset's 30522. A bert_config.json gives its own.
  std::string vocab_path;
  std::optional<int64_t> vocab_size;
  std::vector<std::string> inputs;   // as tasks/pretraining/inputs.h resolves them
  int64_t max_predictions = 0;       // masked positions per sample in the data; 0: from the data
  // Dynamic masking (unmasked inputs, mkpretrain --masking none): masks drawn by the loader at every epoch with
  // create_masked_lm_predictions' rule (pretraining_data/dynamic_masks.h). `masking` is --masking (unset: from
  // the data); dynamic_masking what the run does, resolved from the inputs by run_bert_train.
  std::optional<bool> masking;       // true: --masking dynamic, false: --masking static
  bool dynamic_masking = false;
  std::optional<double> masked_lm_prob;  // --masked-lm-prob (0.15 when unset)
  bool whole_word_mask = false;
  bool global_data_order = false;    // see DataLoaderConfig::global_order
  bool no_nsp = false;               // --no-nsp: the masked-LM loss alone (data from mkpretrain --no-nsp, RoBERTa's finding)
  bool unpadded = true;              // --attention unpadded (the real tokens only) or padded (rows with a mask)
  // Evaluation during training (MLPerf's): the first eval_samples samples of eval_inputs, the same set every time,
  // split over the ranks; the loop's --eval-every-samples sets the cadence.
  std::vector<std::string> eval_inputs;
  uint64_t eval_samples = 10000;     // MLPerf's eval set size
  int64_t eval_batch_size = 64;
};

}  // namespace bk

// The pretraining task's settings (what bert-train's --config, --input, --max-predictions and --global-data-order
// set). Torch-free.
#pragma once

#include "tasks/pretraining/inputs.h"
#include "tasks/pretraining/masking_flags.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bk {

struct PretrainingConfig {
  std::string config_path;           // bert_config.json, or a preset name (model_config/config_presets.h)
  // A preset's vocabulary size: vocab_size if set (--vocab-size), else the size of vocab_path (--vocab), else the
  // preset's 30522. A bert_config.json gives its own.
  std::string vocab_path;
  std::optional<int64_t> vocab_size;
  std::vector<std::string> inputs;   // --input, as given
  PretrainInputs train_set;          // inputs resolved (tasks/pretraining/inputs.h), once, by run_bert_train
  int64_t max_predictions = 0;       // masked positions per sample in the data; 0: from the data
  // Dynamic masking (unmasked inputs, mkpretrain --masking none): the flags, and the rules run_bert_train resolves
  // them to for the training and the evaluation inputs (null: the inputs hold their masks).
  MaskingFlags masking_flags;
  std::shared_ptr<const DynamicMasking> masking, eval_masking;
  bool global_data_order = false;    // see DataLoaderConfig::global_order
  bool no_nsp = false;               // --no-nsp: the masked-LM loss alone (data from mkpretrain --no-nsp, RoBERTa's finding)
  bool unpadded = true;              // --attention unpadded (the real tokens only) or padded (rows with a mask)
  // Evaluation during training (MLPerf's): the first eval_samples samples of eval_inputs, the same set every time,
  // split over the ranks; the loop's --eval-every-samples sets the cadence.
  std::vector<std::string> eval_inputs;
  PretrainInputs eval_set;           // eval_inputs resolved, likewise (no sources: no evaluation)
  uint64_t eval_samples = 10000;     // MLPerf's eval set size
  int64_t eval_batch_size = 64;
};

}  // namespace bk

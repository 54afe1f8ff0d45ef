// The pretraining task's settings (what bert-train's --config, --input, --max-predictions and --global-data-order
// set). Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

struct PretrainingConfig {
  std::string config_path;           // bert_config.json, or a preset name (ckpt/config_presets.h)
  std::vector<std::string> inputs;   // as tasks/pretraining/inputs.h resolves them
  int64_t max_predictions = 20;      // masked positions per sample in the data
  bool global_data_order = false;    // see DataLoaderConfig::global_order
  bool unpadded = true;              // --attention unpadded (the real tokens only) or padded (rows with a mask)
};

}  // namespace bk

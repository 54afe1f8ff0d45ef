#include "tasks/pretraining/bert_train.h"

#include "cli/options.h"
#include "util/error.h"

namespace bk {

void BertTrainConfig::validate() const {
  loop.validate();
  if (data.inputs.empty()) usage_fail("--input: give at least one HDF5 file or directory");
  if (data.max_predictions < 1) usage_fail("--max-predictions must be positive, got {}", data.max_predictions);
}

void add_bert_train_options(Options& options, BertTrainConfig& c) {
  const PretrainingConfig d;  // the defaults, written once in PretrainingConfig's initialisers
  options.add()
    ("config", po::value(&c.data.config_path)->required()->value_name("FILE"),
     "bert_config.json (Google's or HF's keys), or a preset (see man bert-train):\n"
     "bert-base, bert-large,\nbert-L{2,4,6,8,10,12}-H{128,256,512,768}")
    ("input", po::value(&c.data.inputs)->required()->multitoken()->value_name("PATH..."),
     "HDF5 files, directories of them, or bin4 directories")
    ("max-predictions", po::value(&c.data.max_predictions)->default_value(d.max_predictions)->value_name("P"),
     "masked positions per sample in the data")
    ("attention", po::value<std::string>()->default_value(d.unpadded ? "unpadded" : "padded")->value_name("KIND")
                      ->notifier([&c](const std::string& kind) {
                        if (kind != "unpadded" && kind != "padded")
                          usage_fail("--attention must be unpadded or padded, got '{}'", kind);
                        c.data.unpadded = kind == "unpadded";
                      }),
     "unpadded: the encoder computes on real tokens only (needed for packed input); padded: rows with a mask")
    ("global-data-order", po::bool_switch(&c.data.global_data_order),
     "every worker reads the single-process sample order and keeps its slice of each global batch");
  add_loop_options(options, c.loop);
}

}  // namespace bk

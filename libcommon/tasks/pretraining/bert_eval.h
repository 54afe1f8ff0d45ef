// bert-eval: pretraining metrics of a model over HDF5 files (the MLPerf metric is mlm_accuracy), and masked-token
// filling for a few sentences (fill_mask.h). The config and its flags are torch-free (bert_eval_options.cpp).
#pragma once


#include "device/precision_kind.h"
#include "tasks/pretraining/masking_flags.h"
#include "tasks/pretraining/sampler.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bk {

class Options;
struct DynamicMasking;

// Sums over every sample evaluated; the metrics are ratios of them.
struct EvalTotals {
  uint64_t samples = 0;
  uint64_t mlm_correct = 0, mlm_total = 0;  // masked positions: arg-max == original token / all of them
  uint64_t nsp_correct = 0;
  double mlm_loss_sum = 0, nsp_loss_sum = 0;  // summed cross entropies (per masked position / per sample)
  double seconds = 0;
  bool next_sentence = true;  // the model has a next-sentence head (ModernBERT has none: no NSP figures)

  double mlm_accuracy() const { return mlm_total ? static_cast<double>(mlm_correct) / static_cast<double>(mlm_total) : 0; }
  double nsp_accuracy() const { return samples ? static_cast<double>(nsp_correct) / static_cast<double>(samples) : 0; }
  double mlm_loss() const { return mlm_total ? mlm_loss_sum / static_cast<double>(mlm_total) : 0; }
  double nsp_loss() const { return samples ? nsp_loss_sum / static_cast<double>(samples) : 0; }
  // {"samples", "mlm_accuracy", "nsp_accuracy", "mlm_loss", "nsp_loss", "masked_predictions", "seconds",
  //  "samples_per_second"}, without the NSP keys for a model without the head
  nlohmann::ordered_json to_json() const;
};

// The seed an unmasked evaluation set is masked from, once (epoch 0), by bert-eval and bert-train alike: a fixed
// seed, not the run's, so that the scores of any two runs are over the same masks. create_pretraining_data.py's
// default --random_seed.
inline constexpr uint64_t kEvalMaskSeed = 12345;

struct EvalSettings {
  std::vector<SampleFile> files;  // HDF5 files (NVIDIA, MLPerf varlength or packed layout), resolved (inputs.h)
  int64_t batch_size = 64;
  int64_t max_predictions = 0;  // pad prediction slots to this many (a sample with more is an error); 0 = as needed
  uint64_t max_samples = 0;     // stop after this many samples (0 = all)
  uint64_t skip_samples = 0;    // start after this many samples (a rank's share of an evaluation set)
  // Unmasked inputs (mkpretrain --masking none): masked as they are read from (mask_seed, epoch 0, sample_id)
  // (pretraining_data/dynamic_masks.h); null when the inputs hold their masks.
  std::shared_ptr<const DynamicMasking> masking;
  uint64_t mask_seed = kEvalMaskSeed;
  Precision precision = Precision::fp32;  // the forward pass's (autocast for bf16 and fp16)
};

struct BertEvalConfig {
  std::string checkpoint, config;  // model directory or .safetensors file; config.json override
  std::string device = "cpu";      // cpu, cuda, cuda:N
  std::optional<Precision> precision;  // --precision; unset: auto (device/precision.h's choose_precision)
  std::vector<std::string> inputs;  // --input and the operands: files or directories, as bert-train takes them
  EvalSettings settings;            // its files: inputs, resolved
  // --fill-mask mode (when texts is not empty)
  std::vector<std::string> fill_mask_texts;
  std::string vocab;
  std::string tokenizer;  // --tokenizer: a byte-level BPE one instead of --vocab
  int64_t top_k = 5;
  bool cased = false;
  bool quiet = false;
  bool allow_vocab_mismatch = false;  // warn instead of refusing data or a vocabulary of another vocabulary
  // Unmasked inputs: --masking dynamic masks them once from --mask-seed, with the rule of --masked-lm-prob and
  // --whole-word-mask (bert-train's flags); masked inputs keep their masks.
  MaskingFlags masking_flags;

  // bk::UsageError for values or combinations no run can use.
  void validate() const;
};

// bert-eval's flags bound to `config` (operands are added to inputs by the caller).
void add_bert_eval_options(Options& options, BertEvalConfig& config);

// bert-eval: loads the checkpoint, then prints ONE JSON object (metrics) to stdout, or, in fill-mask mode, one
// JSON object per text (fill_mask.h).
void run_bert_eval(const BertEvalConfig& config);

}  // namespace bk

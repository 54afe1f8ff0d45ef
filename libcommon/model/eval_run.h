// bert-eval's work: pretraining metrics of a model over HDF5 files, and masked-token filling for a few sentences.
#pragma once

#include "model/bert.h"
#include "tok/vocab.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

class Progress;

// Sums over every sample evaluated; the metrics are ratios of them.
struct EvalTotals {
  uint64_t samples = 0;
  uint64_t mlm_correct = 0, mlm_total = 0;  // masked positions: arg-max == original token / all of them
  uint64_t nsp_correct = 0;
  double mlm_loss_sum = 0, nsp_loss_sum = 0;  // summed cross entropies (per masked position / per sample)
  double seconds = 0;

  double mlm_accuracy() const { return mlm_total ? static_cast<double>(mlm_correct) / static_cast<double>(mlm_total) : 0; }
  double nsp_accuracy() const { return samples ? static_cast<double>(nsp_correct) / static_cast<double>(samples) : 0; }
  double mlm_loss() const { return mlm_total ? mlm_loss_sum / static_cast<double>(mlm_total) : 0; }
  double nsp_loss() const { return samples ? nsp_loss_sum / static_cast<double>(samples) : 0; }
  // {"samples", "mlm_accuracy", "nsp_accuracy", "mlm_loss", "nsp_loss", "masked_predictions", "seconds",
  //  "samples_per_second"}
  nlohmann::ordered_json to_json() const;
};

struct EvalSettings {
  std::vector<std::string> inputs;  // HDF5 files, NVIDIA or MLPerf varlength layout
  int64_t batch_size = 64;
  int64_t max_predictions = 0;  // pad prediction slots to this many (a sample with more is an error); 0 = as needed
  uint64_t max_samples = 0;     // stop after this many samples (0 = all)
};

// Evaluates the model (switched to eval mode; on its current device) in file order. Every batch is padded only to
// its longest sample. `progress` may be null.
EvalTotals evaluate_pretraining(BertForPreTraining& model, const EvalSettings& settings, Progress* progress = nullptr);

struct EvalOptions {
  std::string checkpoint, config;  // model directory or .safetensors file; config.json override
  std::string device = "cpu";      // cpu, cuda, cuda:N
  EvalSettings settings;
  // --fill-mask mode (when texts is not empty)
  std::vector<std::string> fill_mask_texts;
  std::string vocab;
  int64_t top_k = 5;
  bool cased = false;
  bool quiet = false;
};

// Parses and checks the device ("cpu", "cuda", "cuda:N"); CUDA must be available. Throws bk::UsageError.
at::Device parse_eval_device(const std::string& text);

// bert-eval: loads the checkpoint, then prints ONE JSON object (metrics) to stdout, or, in fill-mask mode, one
// JSON object per text: {"text", "tokens", "masks": [{"position", "predictions": [{"token", "id", "probability"}]}]}.
void run_eval(const EvalOptions& options);

// The fill-mask half (exposed for bert-eval and tests): predictions for each [MASK] of one text.
// "[MASK]" in the text is the mask token itself (the text around it is tokenized as usual); the sequence is
// [CLS] tokens [SEP], segment 0. Probabilities are the softmax over the whole vocabulary at each masked position.
nlohmann::ordered_json fill_mask(BertForPreTraining& model, const tok::Vocab& vocab, const std::string& text,
                                 int64_t top_k, bool cased);

}  // namespace bk

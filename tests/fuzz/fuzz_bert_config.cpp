// libFuzzer target for bert_config.json / HF config.json (every torch tool's --config, ckpt-convert): any bytes
// must give a validated config or a bk::Error, never a crash or a sanitizer report (signed overflow included);
// what validates must be usable: within the maxima, its derived sizes computed without overflow, its JSON read back to the same
// config.
#include "model_config/bert_config.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  try {
    bk::BertConfig c = bk::BertConfig::from_json(json, "fuzz/bert_config.json");
    if (c.padded_vocab_size() < c.vocab_size || c.parameter_count() <= 0) std::abort();
    if (c.hidden_size > bk::BertConfig::kMaxHiddenSize || c.num_hidden_layers > bk::BertConfig::kMaxLayers ||
        c.vocab_size > bk::BertConfig::kMaxVocabSize || c.intermediate_size > bk::BertConfig::kMaxIntermediateSize)
      std::abort();
    (void)c.training_flops_per_sequence(c.max_position_embeddings, 80);
    (void)c.to_hf_json("BertForSequenceClassification", 3);
    bk::BertConfig back = bk::BertConfig::from_json(c.to_json(), "fuzz/round-trip.json");
    if (back.to_json() != c.to_json()) std::abort();
  } catch (const bk::Error&) {
  }
  return 0;
}

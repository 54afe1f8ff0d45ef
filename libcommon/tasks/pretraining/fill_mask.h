// bert-eval --fill-mask: the model's guesses for each [MASK] of a text.
#pragma once

#include "model/bert.h"
#include "tok/vocab.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace bk {

// Predictions for each [MASK] of one text: {"text", "tokens", "masks": [{"position", "predictions": [{"token", "id",
// "probability"}]}]}. "[MASK]" in the text is the mask token itself (the text around it is tokenized as usual); the
// sequence is [CLS] tokens [SEP], segment 0. Probabilities are the softmax over the whole vocabulary at each
// masked position. Unless `quiet`, a text the vocabulary does not fit gets a warning (tok/vocab_fit.h).
nlohmann::ordered_json fill_mask(BertForPreTraining& model, const Vocab& vocab, const std::string& text,
                                 int64_t top_k, bool cased, bool quiet = false);

}  // namespace bk

// bert-eval --fill-mask: the model's guesses for each [MASK] of a text.
#pragma once

#include "model/bert.h"
#include "tok/text_tokenizer.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace bk {

// Predictions for each mask of one text: {"text", "tokens", "masks": [{"position", "predictions": [{"token", "id",
// "probability"}]}]}. The mask token written in the text ("[MASK]", a byte-level BPE tokenizer's "<mask>") is the
// mask itself (the text around it is tokenized as usual); the sequence is [CLS] tokens [SEP] (a BPE tokenizer's
// template: RoBERTa's <s> tokens </s>), segment 0. Probabilities are the softmax over the whole vocabulary at
// each masked position. Unless `quiet`, a text the tokenizer does not fit gets a warning (tok/vocab_fit.h).
nlohmann::ordered_json fill_mask(BertForPreTraining& model, const TextTokenizer& tokenizer, const std::string& text,
                                 int64_t top_k, bool quiet = false);

}  // namespace bk

#include "model/bert.h"

#include "util/error.h"

#include <ATen/ATen.h>

namespace bk {

namespace {

const BertConfig& validated(const BertConfig& config) {
  config.validate("BertForPreTraining");
  return config;
}

}  // namespace

// The pieces register their parameters in this order (embeddings, layers, pooler, heads): reset_parameters draws
// them in it, so a seed gives the same weights as before the model was split into pieces.
BertForPreTraining::BertForPreTraining(const BertConfig& config)
    : torch::nn::Module("BertForPreTraining"),
      config_(validated(config)),
      padded_vocab_(config_.padded_vocab_size(8)),
      params_(*this),
      encoder_(config_, padded_vocab_, params_),
      heads_(config_, padded_vocab_, params_) {
  reset_parameters();
}

void BertForPreTraining::reset_parameters() {
  at::NoGradGuard no_grad;
  const double std = config_.initializer_range;
  for (const auto& [name, t] : params_.list()) {
    const bool layer_norm = name.find("LayerNorm.") != std::string::npos;
    if (layer_norm) {
      if (name.ends_with(".weight")) t.fill_(1.0);
      else t.zero_();
    } else if (name.ends_with(".bias")) {
      t.zero_();
    } else {
      t.normal_(0.0, std);
    }
  }
  const at::Tensor& words = encoder_.word_embeddings();
  if (padded_vocab_ > config_.vocab_size) words.narrow(0, config_.vocab_size, padded_vocab_ - config_.vocab_size).zero_();
}

BertOutput BertForPreTraining::forward(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                       const at::Tensor& attention_mask, const at::Tensor& masked_lm_positions) {
  const EncoderOutput encoded = encoder_.forward(input_ids, segment_ids, attention_mask, is_training());
  return heads_.forward(encoded, masked_lm_positions, encoder_.word_embeddings());
}

}  // namespace bk

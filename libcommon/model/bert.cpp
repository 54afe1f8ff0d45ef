#include "model/bert.h"

namespace bk {

// The pieces register their parameters in this order (embeddings, layers, pooler, heads): reset_parameters draws
// them in it, so a seed gives the same weights whatever the split into pieces.
BertForPreTraining::BertForPreTraining(const BertConfig& config)
    : BertModelBase(config.pretraining_architecture().c_str(), config),
      encoder_(make_encoder(config_, padded_vocab_, params_, /*with_pooler=*/config_.has_next_sentence_head())),
      heads_(config_, padded_vocab_, params_) {
  add_vocab_rows(encoder_->word_embeddings());
  if (heads_.mlm_bias().defined()) add_vocab_rows(heads_.mlm_bias());
  reset_parameters();
}

BertOutput BertForPreTraining::forward(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                       const at::Tensor& attention_mask, const at::Tensor& masked_lm_positions) {
  const EncoderOutput encoded = encoder_->forward(input_ids, segment_ids, attention_mask, is_training());
  return heads_.forward(encoded, masked_lm_positions, encoder_->word_embeddings());
}

BertOutput BertForPreTraining::forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                              const TokenStream& stream, const at::Tensor& masked_tokens) {
  const EncoderOutput encoded = encoder_->forward_stream(input_ids, segment_ids, stream, is_training());
  return heads_.forward_rows(encoded, masked_tokens, encoder_->word_embeddings());
}

}  // namespace bk

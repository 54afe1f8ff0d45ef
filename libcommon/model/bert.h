// The pretraining model of the config's architecture: for BERT, BertForPreTraining in LibTorch, the encoder of Devlin
// et al. (encoder.h) with the masked-LM and next-sentence heads (pretraining_heads.h), parameter for parameter what
// HF transformers' BertForPreTraining and NVIDIA's DeepLearningExamples model hold, under the same names; for
// ModernBERT, HF's ModernBertForMaskedLM (model/modern_encoder.h, its MLM head; no next-sentence head, so
// BertOutput::nsp_logits is undefined).
//
// Names (state_dict(), named_parameter_list()): bert.embeddings.{word,position,token_type}_embeddings.weight,
// bert.embeddings.LayerNorm.{weight,bias}, bert.encoder.layer.N.attention.self.{query,key,value}.{weight,bias},
// bert.encoder.layer.N.attention.output.{dense,LayerNorm}.{weight,bias}, bert.encoder.layer.N.intermediate.dense.*,
// bert.encoder.layer.N.output.{dense,LayerNorm}.*, bert.pooler.dense.*, cls.predictions.transform.{dense,LayerNorm}.*,
// cls.predictions.bias, cls.seq_relationship.{weight,bias}.
//
// The MLM decoder is tied to the word embeddings, so there is no cls.predictions.decoder.weight of its own; the state
// dict leaves it out, as transformers' save_pretrained does (from_pretrained ties it back). The word embeddings and
// cls.predictions.bias hold the padded vocabulary (bert_base.h).
#pragma once

#include "model/bert_base.h"
#include "model/encoder.h"
#include "model/pretraining_heads.h"

namespace bk {

class BertForPreTraining : public BertModelBase {
 public:
  explicit BertForPreTraining(const BertConfig& config);

  // input_ids, segment_ids, attention_mask: int64 [B, T] (attention_mask 1 = real token; an undefined mask means no
  // padding, which lets SDPA pick its fastest kernel). masked_lm_positions: int64 [B, P] or undefined.
  // Dropout follows train()/eval().
  BertOutput forward(const at::Tensor& input_ids, const at::Tensor& segment_ids, const at::Tensor& attention_mask,
                     const at::Tensor& masked_lm_positions = {});
  // Unpadded (BertEncoder::forward_stream): masked_tokens int64 [B, P] index the stream; NSP logits per sequence.
  BertOutput forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids, const TokenStream& stream,
                            const at::Tensor& masked_tokens);

 private:
  std::unique_ptr<Encoder> encoder_;
  PretrainingHeads heads_;
};

}  // namespace bk

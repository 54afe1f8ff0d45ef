// The encoders: what every architecture's encoder does (Encoder), BERT's (BertEncoder: Devlin et al., post-LayerNorm;
// embeddings, the transformer layers and the pooler under HF's names bert.embeddings.*, bert.encoder.layer.N.*,
// bert.pooler.*), and make_encoder, which builds the one a config names (ModernBERT's: model/modern_encoder.h).
// The heads (pretraining_heads.h; question answering and classification with fine-tuning) sit on their outputs.
#pragma once

#include "model_config/bert_config.h"
#include "model/parameters.h"

#include <ATen/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace bk {

struct EncoderOutput {
  at::Tensor sequence;  // [B, T, H]: the last layer's hidden states ([N, H] for a token stream)
  // [B, H] ([S, H] for a stream): what a sequence classifier reads; BERT's pooler tanh(dense(sequence[:, 0])),
  // ModernBERT's pooling (modern_encoder.h). Undefined without a pooler.
  at::Tensor pooled;
};

struct TokenStream;  // model/token_stream.h
class AttentionScope;  // model/attention.h
struct NormOutput;   // model/fused_layer_norm.h

class Encoder {
 public:
  virtual ~Encoder() = default;

  // input_ids, segment_ids, attention_mask: int64 [B, T] (attention_mask 1 = real token; undefined = no padding,
  // which lets SDPA pick its fastest kernel; segment_ids undefined = all 0, and ignored by an architecture without
  // token types). Dropout only when `training`.
  virtual EncoderOutput forward(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                const at::Tensor& attention_mask, bool training) const = 0;

  // Unpadded: the batch's real tokens as one stream (input_ids, segment_ids [B, T] gathered by
  // stream.token_index), GEMMs on [N, H], attention inside each of the S sequences (model/attention.h); positions
  // restart at every sequence. Equal to forward() on the same rows (tests/torch_unit/test_unpadded.cpp).
  virtual EncoderOutput forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids,
                                       const TokenStream& stream, bool training) const = 0;

  // [padded_vocab, H], tied to the MLM decoder.
  virtual const at::Tensor& word_embeddings() const = 0;
};

// The encoder `config` names (BERT's or ModernBERT's), its parameters registered in `params` (word embeddings with
// padded_vocab rows). Without the pooler (HF's BertForQuestionAnswering has none) EncoderOutput::pooled is
// undefined; ModernBERT has no pooler's weights, its pooling is the classifier's (modern_encoder.h).
std::unique_ptr<Encoder> make_encoder(const BertConfig& config, int64_t padded_vocab, ParameterSet& params,
                                      bool with_pooler = true);

class BertEncoder : public Encoder {
 public:
  BertEncoder(const BertConfig& config, int64_t padded_vocab, ParameterSet& params, bool with_pooler = true);

  EncoderOutput forward(const at::Tensor& input_ids, const at::Tensor& segment_ids, const at::Tensor& attention_mask,
                        bool training) const override;
  EncoderOutput forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids, const TokenStream& stream,
                               bool training) const override;
  const at::Tensor& word_embeddings() const override { return word_emb_; }

 private:
  struct Layer {
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b;       // attention.self.{query,key,value}
    at::Tensor ao_w, ao_b, ao_ln_w, ao_ln_b;      // attention.output.dense, attention.output.LayerNorm
    at::Tensor in_w, in_b;                        // intermediate.dense
    at::Tensor out_w, out_b, out_ln_w, out_ln_b;  // output.dense, output.LayerNorm
  };
  // x: [B, T, H] with `mask` (or none), or the stream's [N, H] with `stream`; the previous LayerNorm's output, read
  // by the QKV product and by the residual add.
  NormOutput layer_forward(const Layer& l, const NormOutput& x, const AttentionScope& scope, const TokenStream* stream,
                           bool training) const;
  at::Tensor embed(const at::Tensor& input_ids, const at::Tensor& positions, const at::Tensor& segment_ids,
                   bool training) const;

  BertConfig config_;
  at::Tensor word_emb_, pos_emb_, type_emb_, emb_ln_w_, emb_ln_b_;
  std::vector<Layer> layers_;
  at::Tensor pool_w_, pool_b_;
};

}  // namespace bk

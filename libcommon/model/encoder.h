// The BERT encoder of Devlin et al. (post-LayerNorm): embeddings, the transformer layers and the pooler, under HF's
// names (bert.embeddings.*, bert.encoder.layer.N.*, bert.pooler.*). The heads (pretraining_heads.h; question
// answering and classification with fine-tuning) sit on its outputs.
#pragma once

#include "model_config/bert_config.h"
#include "model/parameters.h"

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

namespace bk {

struct EncoderOutput {
  at::Tensor sequence;  // [B, T, H]: the last layer's hidden states ([N, H] for a token stream)
  at::Tensor pooled;    // [B, H]: tanh(dense(sequence[:, 0])) ([S, H] for a stream); undefined without a pooler
};

struct TokenStream;  // model/token_stream.h
struct NormOutput;   // model/fused_layer_norm.h

class BertEncoder {
 public:
  // Registers the encoder's parameters in `params` (word embeddings with padded_vocab rows). Without the pooler
  // (HF's BertForQuestionAnswering has none) EncoderOutput::pooled is undefined.
  BertEncoder(const BertConfig& config, int64_t padded_vocab, ParameterSet& params, bool with_pooler = true);

  // input_ids, segment_ids, attention_mask: int64 [B, T] (attention_mask 1 = real token; undefined = no padding,
  // which lets SDPA pick its fastest kernel). Dropout only when `training`.
  EncoderOutput forward(const at::Tensor& input_ids, const at::Tensor& segment_ids, const at::Tensor& attention_mask,
                        bool training) const;

  // Unpadded: the batch's real tokens as one stream (input_ids, segment_ids [B, T] gathered by
  // stream.token_index), GEMMs on [N, H], attention inside each of the S sequences: with CUDA in half precision
  // ATen's variable-length flash kernel on the cumulative lengths (it has autograd and honours any dropout
  // probability); otherwise an exact path that lays the sequences out as [S, max_seqlen] with a key mask for SDPA
  // and gathers the result back. Equal to forward() on the same rows (tests/torch_unit/test_unpadded.cpp).
  EncoderOutput forward_stream(const at::Tensor& input_ids, const at::Tensor& segment_ids, const TokenStream& stream,
                               bool training) const;

  const at::Tensor& word_embeddings() const { return word_emb_; }  // [padded_vocab, H], tied to the MLM decoder

 private:
  struct Layer {
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b;       // attention.self.{query,key,value}
    at::Tensor ao_w, ao_b, ao_ln_w, ao_ln_b;      // attention.output.dense, attention.output.LayerNorm
    at::Tensor in_w, in_b;                        // intermediate.dense
    at::Tensor out_w, out_b, out_ln_w, out_ln_b;  // output.dense, output.LayerNorm
  };
  // x: [B, T, H] with `mask` (or none), or the stream's [N, H] with `stream`; the previous LayerNorm's output, read
  // by the QKV product and by the residual add.
  NormOutput layer_forward(const Layer& l, const NormOutput& x, const at::Tensor& mask, const TokenStream* stream,
                           bool training) const;
  at::Tensor embed(const at::Tensor& input_ids, const at::Tensor& positions, const at::Tensor& segment_ids,
                   bool training) const;
  at::Tensor dropout(const at::Tensor& x, bool training) const;

  BertConfig config_;
  at::Tensor word_emb_, pos_emb_, type_emb_, emb_ln_w_, emb_ln_b_;
  std::vector<Layer> layers_;
  at::Tensor pool_w_, pool_b_;
};

}  // namespace bk

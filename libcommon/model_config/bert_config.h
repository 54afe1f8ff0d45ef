// A BERT model's shape and hyper-parameters, as Google's bert_config.json (and HF's config.json) spell them.
// Torch-free: ckpt-convert and the data tools read configs without LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  std::string hidden_act = "gelu";  // gelu (erf), gelu_new/gelu_tanh (tanh approximation), relu
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double initializer_range = 0.02;
  double layer_norm_eps = 1e-12;

  // Reads a Google bert_config.json or an HF config.json; unknown keys are ignored, a missing key keeps its
  // default only where Google's file may omit it (layer_norm_eps). Errors name the file and the key.
  static BertConfig load(const std::string& path);
  static BertConfig from_json(const nlohmann::json& json, const std::string& where);
  // Google's keys (what bert_config.json holds).
  nlohmann::json to_json() const;
  // HF transformers' config.json (model_type, architectures, layer_norm_eps, ...) for `architecture`;
  // num_labels > 0 writes the classifier's id2label / label2id: `labels` (the task's, as task.json and predict name
  // them) when there are num_labels of them, else transformers' LABEL_0, LABEL_1, ...
  nlohmann::json to_hf_json(const std::string& architecture = "BertForPreTraining", int64_t num_labels = 0,
                            const std::vector<std::string>& labels = {}) const;

  // The embedding and decoder rows used internally: vocab_size rounded up to a multiple of `multiple`.
  int64_t padded_vocab_size(int64_t multiple = 8) const { return (vocab_size + multiple - 1) / multiple * multiple; }
  bool operator==(const BertConfig&) const = default;

  // Checks the shape before anything is allocated: every size positive and at most its maximum below, hidden
  // divisible by heads, a known activation, and the parameters (parameter_count() float32 values) fitting in
  // `memory_bytes` (default: this machine's physical memory). Throws a one-line bk::Error naming `where` and the
  // field.
  void validate(const std::string& where) const;
  void validate(const std::string& where, uint64_t memory_bytes) const;

  // The largest sizes validate() accepts: far beyond any published BERT (BERT-large: V 30522, H 1024, L 24,
  // FF 4096, 512 positions; multilingual vocabularies reach 250k), far below what overflows the size arithmetic.
  static constexpr int64_t kMaxVocabSize = int64_t{1} << 24;
  static constexpr int64_t kMaxHiddenSize = int64_t{1} << 16;
  static constexpr int64_t kMaxLayers = 1024;
  static constexpr int64_t kMaxAttentionHeads = int64_t{1} << 16;
  static constexpr int64_t kMaxIntermediateSize = int64_t{1} << 18;
  static constexpr int64_t kMaxPositions = int64_t{1} << 20;
  static constexpr int64_t kMaxTypeVocabSize = int64_t{1} << 16;

  // The weights of BertForPreTraining with this shape (embeddings with the padded vocabulary, encoder, pooler,
  // MLM transform and bias, NSP head; the decoder is tied to the word embeddings). Exact for sizes within the
  // maxima above.
  int64_t parameter_count() const;

  // Training FLOPs of one sequence of `seq_len` tokens with `predictions` masked positions (forward + backward =
  // 3x forward; matmuls only, MLM head on the masked positions only), as DESIGN.md section 6 counts them.
  double training_flops_per_sequence(int64_t seq_len, int64_t predictions) const;
};

}  // namespace bk

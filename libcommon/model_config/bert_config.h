// A BERT-family model's shape and hyper-parameters: Google's bert_config.json and HF's BERT config.json, or HF's
// ModernBERT config.json ("model_type": "modernbert"; model_config/modernbert_config.cpp reads and writes it).
// The architecture is the config's: the model classes build BERT's or ModernBERT's layers from it, and nothing
// else asks which it is. Torch-free: ckpt-convert and the data tools read configs without LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

// What ModernBERT (Warner et al. 2024; HF transformers' ModernBertConfig, whose keys and defaults these are) adds
// to the shared fields: rotary positions, a sliding window on some layers, pre-LN without biases, GeGLU. The
// shared fields keep their meaning: hidden_act is HF's hidden_activation, layer_norm_eps its norm_eps,
// attention_probs_dropout_prob its attention_dropout (on the probabilities and on the attention's output).
struct ModernBertSettings {
  std::vector<std::string> layer_types;  // per layer: "full_attention" (global) or "sliding_attention" (local)
  double global_rope_theta = 160000.0;   // rope_parameters.full_attention.rope_theta
  double local_rope_theta = 10000.0;     // rope_parameters.sliding_attention.rope_theta
  int64_t local_attention = 128;         // the window: a token sees keys within local_attention / 2 positions
  bool norm_bias = false, attention_bias = false, mlp_bias = false, decoder_bias = true, classifier_bias = false;
  double embedding_dropout = 0, mlp_dropout = 0, classifier_dropout = 0;
  std::string classifier_pooling = "cls";      // cls | mean (sequence classification)
  std::string classifier_activation = "gelu";  // the MLM and task heads' activation
  double initializer_cutoff_factor = 2.0;      // weights ~ normal truncated at +-factor * std
  // The special tokens' ids, as the file gives them (null: -1); the padding id is the embedding's padding index.
  int64_t pad_token_id = 50283, bos_token_id = 50281, eos_token_id = 50282, cls_token_id = 50281,
          sep_token_id = 50282;

  bool is_global(int64_t layer) const { return layer_types.at(static_cast<size_t>(layer)) == "full_attention"; }
  bool operator==(const ModernBertSettings&) const = default;
};

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
  std::string model_type = "bert";  // bert | modernbert
  ModernBertSettings modern;        // model_type modernbert only

  bool is_modernbert() const { return model_type == "modernbert"; }
  // The class transformers' AutoModelForMaskedLM (or pretraining) builds for this config.
  std::string pretraining_architecture() const { return is_modernbert() ? "ModernBertForMaskedLM" : "BertForPreTraining"; }
  // Whether the architecture has token types and a next-sentence head (BERT) or neither (ModernBERT).
  bool has_next_sentence_head() const { return !is_modernbert(); }
  // The masked-LM head's activation: BERT's hidden_act, ModernBERT's classifier_activation.
  const std::string& head_activation() const { return is_modernbert() ? modern.classifier_activation : hidden_act; }

  // Reads a Google bert_config.json or an HF config.json; unknown keys are ignored, a missing key keeps its
  // default only where Google's file may omit it (layer_norm_eps). Errors name the file and the key.
  static BertConfig load(const std::string& path);
  static BertConfig from_json(const nlohmann::json& json, const std::string& where);
  // Google's keys (what bert_config.json holds); a ModernBERT config, which has no Google form, as to_hf_json.
  nlohmann::json to_json() const;
  // HF transformers' config.json (model_type, architectures, layer_norm_eps, ...) for `architecture`;
  // num_labels > 0 writes the classifier's id2label / label2id: `labels` (the task's, as task.json and predict name
  // them) when there are num_labels of them, else transformers' LABEL_0, LABEL_1, ...
  // architecture empty: pretraining_architecture().
  nlohmann::json to_hf_json(const std::string& architecture = "", int64_t num_labels = 0,
                            const std::vector<std::string>& labels = {}) const;

  // HF's ModernBERT config.json, both generations of its keys (modernbert_config.cpp); validated.
  static BertConfig from_modernbert_json(const nlohmann::json& json, const std::string& where);

  // The embedding and decoder rows used internally: vocab_size rounded up to a multiple of `multiple`.
  int64_t padded_vocab_size(int64_t multiple = 8) const { return (vocab_size + multiple - 1) / multiple * multiple; }
  bool operator==(const BertConfig&) const = default;
  // What `to` changes of this config, key by key as to_json() spells them: "max_position_embeddings 1024 -> 8192".
  std::vector<std::string> changes_to(const BertConfig& to) const;
  // ModernBERT's config.json keys and values as transformers 5.x writes them (without model_type, architectures).
  nlohmann::json modernbert_hf_json() const;

  // Checks the shape before anything is allocated: every size positive and at most its maximum below, hidden
  // divisible by heads, a known activation, and the parameters (parameter_count() float32 values) fitting in
  // `memory_bytes` (default: this machine's physical memory). Throws a one-line bk::Error naming `where` and the
  // field.
  void validate(const std::string& where) const;
  void validate(const std::string& where, uint64_t memory_bytes) const;
  // ModernBERT's own keys (layer_types, the window, the thetas, the activations), by validate().
  void validate_modernbert(const std::string& where) const;

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

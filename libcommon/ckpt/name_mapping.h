// Names of BERT pretraining tensors: google-research/bert's TF1 variables and HF transformers' / NVIDIA's
// PyTorch parameters (DESIGN.md section 5), and the shapes a config implies.
//
//   bert/embeddings/word_embeddings            -> bert.embeddings.word_embeddings.weight
//   .../LayerNorm/gamma | beta                 -> .../LayerNorm.weight | bias
//   bert/encoder/layer_3/...                   -> bert.encoder.layer.3....
//   .../kernel                                 -> .../weight, transposed ([in, out] -> [out, in])
//   cls/predictions/output_bias                -> cls.predictions.bias
//   cls/seq_relationship/output_weights | bias -> cls.seq_relationship.weight (not transposed) | bias
// Fine-tuned heads (not transposed either: Google's scripts multiply by them with transpose_b):
//   cls/squad/output_weights | output_bias     -> qa_outputs.weight | bias      (run_squad.py)
//   output_weights | output_bias               -> classifier.weight | bias      (run_classifier.py)
// Optimizer slots: VAR/adam_m, VAR/adam_v (google-research/bert's AdamWeightDecay and NVIDIA's LAMB) and
// VAR/Adam, VAR/Adam_1 (tf.train.AdamOptimizer) are Adam's first and second moments of VAR; global_step,
// beta1_power/beta2_power, LAMB* bookkeeping and loss-scale variables are training state we drop.
#pragma once

#include "model_config/bert_config.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

enum class TfRole {
  kWeight,     // a model parameter
  kAdamM,      // Adam's first moment of a parameter
  kAdamV,      // Adam's second moment
  kTraining,   // optimizer or loop bookkeeping, dropped
  kUnmapped,   // nothing we know
};

struct MappedTfName {
  TfRole role = TfRole::kUnmapped;
  std::string hf_name;     // the parameter's HF name (for kWeight, kAdamM, kAdamV)
  bool transpose = false;  // TF dense kernels are [in, out]; PyTorch Linear weights are [out, in]
};

// Maps one TF variable name. A name that follows the rules but is not a BertForPreTraining parameter
// (checked against `expected`) is kUnmapped.
MappedTfName map_tf_name(std::string_view tf_name, const std::vector<std::string>& expected);

struct MappedHfName {
  std::string tf_name;     // empty: no TF variable has this name
  bool transpose = false;  // a Linear weight [out, in] becomes a dense kernel [in, out]
};

// The inverse of map_tf_name, for the parameters bert_tensors() lists (any head): google-research/bert's variable
// name, with `role` kAdamM / kAdamV giving the slot VAR/adam_m / VAR/adam_v (the names its AdamWeightDecay
// optimizer writes). map_tf_name(map_hf_name(n).tf_name, {n}) gives back n and the same transposition.
MappedHfName map_hf_name(std::string_view hf_name, TfRole role = TfRole::kWeight);

// The HF name of a parameter's optimizer state in a native checkpoint: "<name>.exp_avg" / "<name>.exp_avg_sq".
std::string adam_state_name(const std::string& hf_name, TfRole role);

// The head a checkpoint carries: BertForPreTraining's (MLM + NSP), BertForQuestionAnswering's (qa_outputs, no
// pooler: HF's class has none) or BertForSequenceClassification's (classifier over the pooler).
enum class BertHead { pretraining, span, classifier };
const char* head_architecture(BertHead head);  // HF's class name
std::string head_architecture(const BertConfig& config, BertHead head);  // BERT's or ModernBERT's

struct ExpectedTensor {
  std::string name;            // HF name
  std::vector<int64_t> shape;  // HF layout, true vocab size
};

// Every parameter of BertForPreTraining under `config`, in a fixed order (embeddings, layers, pooler, heads);
// the tied decoder weight and bias are not listed (they are the word embeddings and cls.predictions.bias). For a
// ModernBERT config, ModernBertForMaskedLM's (model.*, head.*, decoder.bias; the tied decoder.weight not listed).
std::vector<ExpectedTensor> bert_pretraining_tensors(const BertConfig& config);
// The same for any head (num_labels: the classifier's rows); for ModernBERT its task classes' tensors.
std::vector<ExpectedTensor> bert_tensors(const BertConfig& config, BertHead head, int64_t num_labels = 2);
std::vector<std::string> expected_names(const std::vector<ExpectedTensor>& tensors);

// True for the tensors that carry one row per vocabulary entry (padded with --pad-vocab): BERT's word embeddings
// and cls.predictions.bias, ModernBERT's tok_embeddings and decoder.bias.
bool is_vocab_tensor(std::string_view hf_name);

}  // namespace bk

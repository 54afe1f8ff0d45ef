#include "ckpt/name_mapping.h"

#include "util/error.h"

#include <algorithm>

namespace bk {
namespace {

std::vector<std::string_view> split_slash(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t slash = s.find('/', start);
    parts.push_back(s.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Bookkeeping variables of TF training loops and optimizers, by any path component.
bool is_training_state(const std::vector<std::string_view>& parts) {
  for (std::string_view p : parts) {
    if (p == "global_step" || p == "beta1_power" || p == "beta2_power" || p.starts_with("LAMB") ||
        p.starts_with("lamb") || p == "loss_scale" || p == "current_loss_scale" || p == "good_steps")
      return true;
  }
  return false;
}

// The fine-tuned heads' variables, whose names follow no rule of the encoder's.
std::string_view head_name(std::string_view path) {
  if (path == "cls/squad/output_weights") return "qa_outputs.weight";
  if (path == "cls/squad/output_bias") return "qa_outputs.bias";
  if (path == "output_weights") return "classifier.weight";
  if (path == "output_bias") return "classifier.bias";
  return {};
}

}  // namespace

const char* head_architecture(BertHead head) {
  switch (head) {
    case BertHead::span: return "BertForQuestionAnswering";
    case BertHead::classifier: return "BertForSequenceClassification";
    default: return "BertForPreTraining";
  }
}

std::string head_architecture(const BertConfig& config, BertHead head) {
  if (!config.is_modernbert()) return head_architecture(head);
  switch (head) {
    case BertHead::span: return "ModernBertForQuestionAnswering";
    case BertHead::classifier: return "ModernBertForSequenceClassification";
    default: return "ModernBertForMaskedLM";
  }
}

MappedTfName map_tf_name(std::string_view tf_name, const std::vector<std::string>& expected) {
  MappedTfName out;
  std::vector<std::string_view> parts = split_slash(tf_name);
  if (is_training_state(parts)) {
    out.role = TfRole::kTraining;
    return out;
  }
  TfRole role = TfRole::kWeight;
  std::string_view slot = parts.back();
  if (parts.size() > 1 && (slot == "adam_m" || slot == "Adam")) role = TfRole::kAdamM;
  if (parts.size() > 1 && (slot == "adam_v" || slot == "Adam_1")) role = TfRole::kAdamV;
  if (role != TfRole::kWeight) parts.pop_back();

  std::string path;
  for (std::string_view p : parts) path += (path.empty() ? "" : "/") + std::string(p);
  std::string name(head_name(path));
  const bool head = !name.empty();
  auto append = [&](std::string_view piece) {
    if (!name.empty()) name += '.';
    name += piece;
  };
  for (size_t i = 0; !head && i < parts.size(); ++i) {
    std::string_view p = parts[i];
    bool last = i + 1 == parts.size();
    if (p.starts_with("layer_") && all_digits(p.substr(6))) {
      append("layer");
      append(p.substr(6));
    } else if (last && (p == "gamma" || p == "output_weights")) {
      append("weight");
    } else if (last && (p == "beta" || p == "output_bias")) {
      append("bias");
    } else if (last && p == "kernel") {
      append("weight");
      out.transpose = true;
    } else if (last && p.ends_with("_embeddings")) {
      append(p);
      append("weight");
    } else {
      append(p);
    }
  }
  if (std::find(expected.begin(), expected.end(), name) == expected.end()) {
    out.role = TfRole::kUnmapped;
    out.transpose = false;
    return out;
  }
  out.role = role;
  out.hf_name = std::move(name);
  return out;
}

MappedHfName map_hf_name(std::string_view hf_name, TfRole role) {
  MappedHfName out;
  std::string path;
  // The heads' and the pretraining output layers' names follow no rule of the encoder's (name_mapping.h).
  for (std::string_view head : {"cls/squad/output_weights", "cls/squad/output_bias", "output_weights", "output_bias"})
    if (head_name(head) == hf_name) path = head;
  if (hf_name == "cls.predictions.bias") path = "cls/predictions/output_bias";
  if (hf_name == "cls.seq_relationship.weight") path = "cls/seq_relationship/output_weights";
  if (hf_name == "cls.seq_relationship.bias") path = "cls/seq_relationship/output_bias";
  if (path.empty()) {
    std::vector<std::string_view> parts;
    for (size_t start = 0;;) {
      size_t dot = hf_name.find('.', start);
      parts.push_back(hf_name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    if (parts.size() < 2) return out;
    auto append = [&](std::string_view piece) {
      if (!path.empty()) path += '/';
      path += piece;
    };
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (parts[i] == "layer" && i + 2 < parts.size() && all_digits(parts[i + 1])) {
        append("layer_" + std::string(parts[i + 1]));
        ++i;
      } else {
        append(parts[i]);
      }
    }
    std::string_view owner = parts[parts.size() - 2], last = parts.back();
    if (owner == "LayerNorm" && (last == "weight" || last == "bias")) {
      append(last == "weight" ? "gamma" : "beta");
    } else if (owner.ends_with("_embeddings") && last == "weight") {
      // bert/embeddings/word_embeddings: the variable is the table itself
    } else if (last == "weight") {
      append("kernel");
      out.transpose = true;
    } else if (last == "bias") {
      append("bias");
    } else {
      return out;
    }
  }
  if (role == TfRole::kAdamM) path += "/adam_m";
  if (role == TfRole::kAdamV) path += "/adam_v";
  out.tf_name = std::move(path);
  return out;
}

std::string adam_state_name(const std::string& hf_name, TfRole role) {
  return hf_name + (role == TfRole::kAdamM ? ".exp_avg" : ".exp_avg_sq");
}

std::vector<ExpectedTensor> bert_pretraining_tensors(const BertConfig& c) { return bert_tensors(c, BertHead::pretraining); }

namespace {

// ModernBertForMaskedLM's parameters, in model/modern_encoder.h's order; a task model's (ModernBertFor
// QuestionAnswering, ...ForSequenceClassification) keep head.* and put classifier.* where decoder.bias is.
std::vector<ExpectedTensor> modernbert_tensors(const BertConfig& c, BertHead head, int64_t num_labels) {
  const int64_t H = c.hidden_size, I = c.intermediate_size;
  const ModernBertSettings& m = c.modern;
  std::vector<ExpectedTensor> t;
  auto norm = [&](const std::string& prefix) {
    t.push_back({prefix + ".weight", {H}});
    if (m.norm_bias) t.push_back({prefix + ".bias", {H}});
  };
  auto linear = [&](const std::string& prefix, int64_t out, int64_t in, bool bias) {
    t.push_back({prefix + ".weight", {out, in}});
    if (bias) t.push_back({prefix + ".bias", {out}});
  };
  t.push_back({"model.embeddings.tok_embeddings.weight", {c.vocab_size, H}});
  norm("model.embeddings.norm");
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l);
    if (l > 0) norm(p + ".attn_norm");
    linear(p + ".attn.Wqkv", 3 * H, H, m.attention_bias);
    linear(p + ".attn.Wo", H, H, m.attention_bias);
    norm(p + ".mlp_norm");
    linear(p + ".mlp.Wi", 2 * I, H, m.mlp_bias);
    linear(p + ".mlp.Wo", H, I, m.mlp_bias);
  }
  norm("model.final_norm");
  linear("head.dense", H, H, m.classifier_bias);
  norm("head.norm");
  if (head == BertHead::pretraining) {
    if (m.decoder_bias) t.push_back({"decoder.bias", {c.vocab_size}});
  } else {
    linear("classifier", head == BertHead::span ? 2 : num_labels, H, true);
  }
  return t;
}

}  // namespace

std::vector<ExpectedTensor> bert_tensors(const BertConfig& c, BertHead head, int64_t num_labels) {
  if (c.is_modernbert()) return modernbert_tensors(c, head, num_labels);
  const int64_t H = c.hidden_size, I = c.intermediate_size;
  std::vector<ExpectedTensor> t;
  auto dense = [&](const std::string& prefix, int64_t out, int64_t in) {
    t.push_back({prefix + ".weight", {out, in}});
    t.push_back({prefix + ".bias", {out}});
  };
  auto layer_norm = [&](const std::string& prefix) {
    t.push_back({prefix + ".weight", {H}});
    t.push_back({prefix + ".bias", {H}});
  };
  t.push_back({"bert.embeddings.word_embeddings.weight", {c.vocab_size, H}});
  t.push_back({"bert.embeddings.position_embeddings.weight", {c.max_position_embeddings, H}});
  t.push_back({"bert.embeddings.token_type_embeddings.weight", {c.type_vocab_size, H}});
  layer_norm("bert.embeddings.LayerNorm");
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    std::string p = "bert.encoder.layer." + std::to_string(l);
    dense(p + ".attention.self.query", H, H);
    dense(p + ".attention.self.key", H, H);
    dense(p + ".attention.self.value", H, H);
    dense(p + ".attention.output.dense", H, H);
    layer_norm(p + ".attention.output.LayerNorm");
    dense(p + ".intermediate.dense", I, H);
    dense(p + ".output.dense", H, I);
    layer_norm(p + ".output.LayerNorm");
  }
  if (head == BertHead::span) {
    dense("qa_outputs", 2, H);
    return t;
  }
  dense("bert.pooler.dense", H, H);
  if (head == BertHead::classifier) {
    dense("classifier", num_labels, H);
    return t;
  }
  dense("cls.predictions.transform.dense", H, H);
  layer_norm("cls.predictions.transform.LayerNorm");
  t.push_back({"cls.predictions.bias", {c.vocab_size}});
  dense("cls.seq_relationship", 2, H);
  return t;
}

std::vector<std::string> expected_names(const std::vector<ExpectedTensor>& tensors) {
  std::vector<std::string> names;
  names.reserve(tensors.size());
  for (const auto& t : tensors) names.push_back(t.name);
  return names;
}

bool is_vocab_tensor(std::string_view hf_name) {
  return hf_name == "bert.embeddings.word_embeddings.weight" || hf_name == "cls.predictions.bias" ||
         hf_name == "model.embeddings.tok_embeddings.weight" || hf_name == "decoder.bias";
}

}  // namespace bk

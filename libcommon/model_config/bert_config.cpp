#include "model_config/bert_config.h"

#include "util/error.h"
#include "util/json_read.h"
#include "io/input.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <tuple>

namespace bk {

BertConfig BertConfig::load(const std::string& path) {
  return from_json(parse_json(read_file(path), path), path);
}

BertConfig BertConfig::from_json(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) fail("{}: a BERT config must be a JSON object", where);
  if (json.contains("model_type") && json["model_type"] == "modernbert") return from_modernbert_json(json, where);
  BertConfig c;
  auto get_int = [&](const char* key, int64_t& out, bool required) {
    if (!json.contains(key)) {
      if (required) fail("{}: missing \"{}\"", where, key);
      return;
    }
    if (!json[key].is_number_integer()) fail("{}: \"{}\" must be an integer", where, key);
    if (json[key].is_number_unsigned() && json[key].get<uint64_t>() > uint64_t{INT64_MAX})
      fail("{}: \"{}\" {} is too large", where, key, json[key].get<uint64_t>());
    out = json[key].get<int64_t>();
  };
  auto get_double = [&](const char* key, double& out, bool required) {
    if (!json.contains(key)) {
      if (required) fail("{}: missing \"{}\"", where, key);
      return;
    }
    if (!json[key].is_number()) fail("{}: \"{}\" must be a number", where, key);
    out = json[key].get<double>();
  };
  get_int("vocab_size", c.vocab_size, true);
  get_int("hidden_size", c.hidden_size, true);
  get_int("num_hidden_layers", c.num_hidden_layers, true);
  get_int("num_attention_heads", c.num_attention_heads, true);
  get_int("intermediate_size", c.intermediate_size, true);
  get_int("max_position_embeddings", c.max_position_embeddings, true);
  get_int("type_vocab_size", c.type_vocab_size, true);
  get_double("hidden_dropout_prob", c.hidden_dropout_prob, true);
  get_double("attention_probs_dropout_prob", c.attention_probs_dropout_prob, true);
  get_double("initializer_range", c.initializer_range, true);
  get_double("layer_norm_eps", c.layer_norm_eps, false);
  if (!json.contains("hidden_act")) fail("{}: missing \"hidden_act\"", where);
  if (!json["hidden_act"].is_string())
    fail("{}: \"hidden_act\" must be a string such as \"gelu\", got {}", where, json["hidden_act"].type_name());
  c.hidden_act = json["hidden_act"].get<std::string>();
  c.validate(where);
  return c;
}

namespace {

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX;  // unknown: only the maxima apply
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

}  // namespace

void BertConfig::validate(const std::string& where) const { validate(where, physical_memory_bytes()); }

void BertConfig::validate(const std::string& where, uint64_t memory_bytes) const {
  for (auto [key, value] : {std::pair{"vocab_size", vocab_size}, {"hidden_size", hidden_size},
                            {"num_hidden_layers", num_hidden_layers}, {"num_attention_heads", num_attention_heads},
                            {"intermediate_size", intermediate_size}, {"max_position_embeddings", max_position_embeddings},
                            {"type_vocab_size", type_vocab_size}})
    if (value <= 0) fail("{}: \"{}\" must be positive, got {}", where, key, value);
  for (auto [key, value, max] : {std::tuple{"vocab_size", vocab_size, kMaxVocabSize},
                                 {"hidden_size", hidden_size, kMaxHiddenSize},
                                 {"num_hidden_layers", num_hidden_layers, kMaxLayers},
                                 {"num_attention_heads", num_attention_heads, kMaxAttentionHeads},
                                 {"intermediate_size", intermediate_size, kMaxIntermediateSize},
                                 {"max_position_embeddings", max_position_embeddings, kMaxPositions},
                                 {"type_vocab_size", type_vocab_size, kMaxTypeVocabSize}})
    if (value > max) fail("{}: \"{}\" {} is beyond the maximum {}", where, key, value, max);
  if (hidden_size % num_attention_heads != 0)
    fail("{}: hidden_size {} is not a multiple of num_attention_heads {}", where, hidden_size, num_attention_heads);
  if (is_modernbert()) validate_modernbert(where);
  else if (hidden_act != "gelu" && hidden_act != "gelu_new" && hidden_act != "gelu_tanh" && hidden_act != "relu")
    fail("{}: hidden_act \"{}\" is not supported (gelu, gelu_new, gelu_tanh, relu)", where, hidden_act);
  // ModernBERT's files name two of these fields otherwise (attention_dropout, norm_eps).
  const bool modern = is_modernbert();
  for (auto [key, value] : {std::pair{"hidden_dropout_prob", hidden_dropout_prob},
                            {modern ? "attention_dropout" : "attention_probs_dropout_prob", attention_probs_dropout_prob}})
    if (!(value >= 0 && value < 1)) fail("{}: \"{}\" must be in [0, 1), got {}", where, key, value);
  if (!(layer_norm_eps > 0 && std::isfinite(layer_norm_eps)))
    fail("{}: \"{}\" must be positive and finite, got {}", where, modern ? "norm_eps" : "layer_norm_eps",
         layer_norm_eps);
  if (!(initializer_range >= 0 && std::isfinite(initializer_range)))
    fail("{}: \"initializer_range\" must be non-negative and finite, got {}", where, initializer_range);

  // Within the maxima the count cannot overflow (below 2^46); it is what the model allocates first.
  const uint64_t bytes = static_cast<uint64_t>(parameter_count()) * sizeof(float);
  if (bytes > memory_bytes) {
    // Name the field that makes the model this large: the one furthest above BERT-large's value.
    const char* field = "hidden_size";
    int64_t value = hidden_size;
    double worst = 0;
    for (auto [key, v, large] : {std::tuple{"vocab_size", vocab_size, 30522.0}, {"hidden_size", hidden_size, 1024.0},
                                 {"num_hidden_layers", num_hidden_layers, 24.0},
                                 {"intermediate_size", intermediate_size, 4096.0},
                                 {"max_position_embeddings", max_position_embeddings, 512.0}})
      // Rotary positions (ModernBERT) have no weights.
      if (static_cast<double>(v) / large > worst && !(modern && std::string_view(key) == "max_position_embeddings")) {
        worst = static_cast<double>(v) / large;
        field = key;
        value = v;
      }
    fail("{}: \"{}\" {} makes a model of {} parameters ({:.1f} GiB as float32), more than this machine's "
         "{:.1f} GiB of memory", where, field, value, parameter_count(), static_cast<double>(bytes) / (1 << 30),
         static_cast<double>(memory_bytes) / (1 << 30));
  }
}

int64_t BertConfig::parameter_count() const {
  const int64_t h = hidden_size, f = intermediate_size;
  if (is_modernbert()) {
    const int64_t norm = modern.norm_bias ? 2 * h : h;
    const int64_t attn = 4 * h * h + (modern.attention_bias ? 4 * h : 0);  // Wqkv, Wo
    const int64_t mlp = 3 * h * f + (modern.mlp_bias ? 2 * f + h : 0);    // Wi (input and gate), Wo
    const int64_t layers = num_hidden_layers * (2 * norm + attn + mlp) - norm;  // layer 0 has no attention norm
    const int64_t head = h * h + (modern.classifier_bias ? h : 0) + norm + (modern.decoder_bias ? padded_vocab_size(8) : 0);
    return padded_vocab_size(8) * h + norm + layers + norm + head;  // embeddings, layers, final norm, MLM head
  }
  const int64_t embeddings = (padded_vocab_size(8) + max_position_embeddings + type_vocab_size) * h + 2 * h;
  // Q, K, V and the attention output (weights and biases), its LayerNorm, the two FFN matmuls, their LayerNorm.
  const int64_t layer = 4 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h) + 2 * h;
  const int64_t pooler = h * h + h;
  const int64_t mlm = h * h + h + 2 * h + padded_vocab_size(8);  // transform, its LayerNorm, the decoder's bias
  const int64_t nsp = 2 * h + 2;
  return embeddings + num_hidden_layers * layer + pooler + mlm + nsp;
}

nlohmann::json BertConfig::to_json() const {
  if (is_modernbert()) return to_hf_json();
  return {{"attention_probs_dropout_prob", attention_probs_dropout_prob}, {"hidden_act", hidden_act},
          {"hidden_dropout_prob", hidden_dropout_prob}, {"hidden_size", hidden_size},
          {"initializer_range", initializer_range}, {"intermediate_size", intermediate_size},
          {"max_position_embeddings", max_position_embeddings}, {"num_attention_heads", num_attention_heads},
          {"num_hidden_layers", num_hidden_layers}, {"type_vocab_size", type_vocab_size},
          {"vocab_size", vocab_size}, {"layer_norm_eps", layer_norm_eps}};
}

nlohmann::json BertConfig::to_hf_json(const std::string& architecture, int64_t num_labels,
                                      const std::vector<std::string>& labels) const {
  const std::string arch = architecture.empty() ? pretraining_architecture() : architecture;
  nlohmann::json j = is_modernbert() ? modernbert_hf_json() : to_json();
  j["model_type"] = model_type;
  j["architectures"] = {arch};
  const bool named = static_cast<int64_t>(labels.size()) == num_labels;
  for (int64_t i = 0; i < num_labels; ++i) {
    const std::string label = named ? labels[static_cast<size_t>(i)] : "LABEL_" + std::to_string(i);
    j["id2label"][std::to_string(i)] = label;
    j["label2id"][label] = i;
  }
  if (is_modernbert()) return j;
  j["pad_token_id"] = 0;
  j["position_embedding_type"] = "absolute";
  if (hidden_act == "gelu_tanh") j["hidden_act"] = "gelu_new";
  return j;
}

double BertConfig::training_flops_per_sequence(int64_t seq_len, int64_t predictions) const {
  const double s = static_cast<double>(seq_len), h = static_cast<double>(hidden_size);
  const double f = static_cast<double>(intermediate_size), l = static_cast<double>(num_hidden_layers);
  // Per layer and token: Q, K, V and output projections (4 h^2), two FFN matmuls (2 h f; GeGLU's three: 3 h f);
  // attention scores and the weighted sum (2 h per key: s keys, or a sliding window's). Each multiply-add is 2 FLOPs.
  if (is_modernbert()) {
    double keys = 0;
    for (int64_t i = 0; i < num_hidden_layers; ++i)
      keys += modern.is_global(i) ? s : std::min(s, static_cast<double>(modern.local_attention + 1));
    const double encoder = s * (l * (2 * 4 * h * h + 2 * 3 * h * f) + 2 * 2 * keys * h);
    const double head = static_cast<double>(predictions) * 2 * (h * h + h * static_cast<double>(vocab_size));
    return 3 * (encoder + head);
  }
  const double encoder = l * s * (2 * 4 * h * h + 2 * 2 * h * f + 2 * 2 * s * h);
  // MLM head on the masked positions: transform (h^2) and decoder (h V); NSP pooler (h^2) per sequence.
  const double head = static_cast<double>(predictions) * 2 * (h * h + h * static_cast<double>(vocab_size)) + 2 * h * h;
  return 3 * (encoder + head);
}

namespace {

// The differences of two JSON values under `key`, nested objects compared key by key (dotted names).
void json_changes(const std::string& key, const nlohmann::json& a, const nlohmann::json& b,
                  std::vector<std::string>& out) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [k, v] : b.items())
      json_changes(key.empty() ? k : key + "." + k, a.contains(k) ? a.at(k) : nlohmann::json(), v, out);
    for (const auto& [k, v] : a.items())
      if (!b.contains(k)) json_changes(key.empty() ? k : key + "." + k, v, nlohmann::json(), out);
  } else if (a != b) {
    out.push_back(key + " " + (a.is_null() ? "none" : a.dump()) + " -> " + (b.is_null() ? "none" : b.dump()));
  }
}

}  // namespace

std::vector<std::string> BertConfig::changes_to(const BertConfig& to) const {
  std::vector<std::string> out;
  json_changes("", to_json(), to.to_json(), out);
  return out;
}

}  // namespace bk

// HF transformers' ModernBERT config.json: read with both generations of its keys, written as transformers 5.x
// writes it, checked before anything is allocated.
//
// v4.x files (ModernBERT's releases) hold global_attn_every_n_layers (layer i is global when i % n == 0),
// global_rope_theta and local_rope_theta; 5.x files hold layer_types and rope_parameters
// ({"full_attention": {"rope_theta": ...}, "sliding_attention": {...}}). A key that is absent takes
// ModernBertConfig's default, as from_pretrained gives it (save_pretrained may leave defaults out).
#include "model_config/bert_config.h"

#include "util/error.h"

#include <cmath>
#include <cstdint>

namespace bk {

namespace {

class ModernBertKeys {
 public:
  ModernBertKeys(const nlohmann::json& json, const std::string& where) : json_(json), where_(where) {}

  void get(const char* key, int64_t& out) const {
    if (!json_.contains(key)) return;
    const nlohmann::json& v = json_[key];
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}))
      fail("{}: \"{}\" must be an integer", where_, key);
    out = v.get<int64_t>();
  }
  // A special token's id; null (a tokenizer without that token) is -1.
  void get_token(const char* key, int64_t& out) const {
    if (json_.contains(key) && json_[key].is_null()) out = -1;
    else get(key, out);
  }
  void get(const char* key, double& out) const {
    if (!json_.contains(key)) return;
    if (!json_[key].is_number()) fail("{}: \"{}\" must be a number", where_, key);
    out = json_[key].get<double>();
  }
  void get(const char* key, bool& out) const {
    if (!json_.contains(key)) return;
    if (!json_[key].is_boolean()) fail("{}: \"{}\" must be true or false", where_, key);
    out = json_[key].get<bool>();
  }
  void get(const char* key, std::string& out) const {
    if (!json_.contains(key)) return;
    if (!json_[key].is_string()) fail("{}: \"{}\" must be a string", where_, key);
    out = json_[key].get<std::string>();
  }

  // layer_types, or v4.x's global_attn_every_n_layers (default 3).
  std::vector<std::string> layer_types(int64_t layers) const {
    std::vector<std::string> types;
    if (json_.contains("layer_types") && !json_["layer_types"].is_null()) {
      if (!json_["layer_types"].is_array()) fail("{}: \"layer_types\" must be a list", where_);
      for (const auto& t : json_["layer_types"]) {
        if (!t.is_string()) fail("{}: \"layer_types\" must list strings", where_);
        types.push_back(t.get<std::string>());
      }
      return types;
    }
    int64_t every = 3;
    get("global_attn_every_n_layers", every);
    if (every <= 0) fail("{}: \"global_attn_every_n_layers\" must be positive, got {}", where_, every);
    if (layers <= 0 || layers > BertConfig::kMaxLayers) return types;  // validate() names num_hidden_layers
    for (int64_t i = 0; i < layers; ++i) types.push_back(i % every == 0 ? "full_attention" : "sliding_attention");
    return types;
  }

  // rope_parameters' theta for a layer type, or v4.x's key for it.
  void rope_theta(const char* layer_type, const char* old_key, double& out) const {
    if (!json_.contains("rope_parameters") || json_["rope_parameters"].is_null()) return get(old_key, out);
    const nlohmann::json& rope = json_["rope_parameters"];
    if (!rope.is_object()) fail("{}: \"rope_parameters\" must be an object", where_);
    if (!rope.contains(layer_type) || rope[layer_type].is_null()) return get(old_key, out);
    const nlohmann::json& p = rope[layer_type];
    if (!p.is_object()) fail("{}: \"rope_parameters.{}\" must be an object", where_, layer_type);
    if (p.contains("rope_type") && p["rope_type"] != "default")
      fail("{}: \"rope_parameters.{}.rope_type\" {} is not supported (only \"default\" rotary embeddings)", where_,
           layer_type, p["rope_type"].dump());
    if (p.contains("rope_theta")) {
      if (!p["rope_theta"].is_number()) fail("{}: \"rope_parameters.{}.rope_theta\" must be a number", where_, layer_type);
      out = p["rope_theta"].get<double>();
    }
  }

 private:
  const nlohmann::json& json_;
  const std::string& where_;
};

bool known_activation(const std::string& name) {
  return name == "gelu" || name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_tanh" ||
         name == "relu" || name == "silu";
}

}  // namespace

BertConfig BertConfig::from_modernbert_json(const nlohmann::json& json, const std::string& where) {
  BertConfig c;
  c.model_type = "modernbert";
  // ModernBertConfig's defaults (transformers 5.x), where they differ from BERT's.
  c.vocab_size = 50368;
  c.intermediate_size = 1152;
  c.num_hidden_layers = 22;
  c.max_position_embeddings = 8192;
  c.layer_norm_eps = 1e-5;
  c.hidden_dropout_prob = 0;
  c.attention_probs_dropout_prob = 0;
  const ModernBertKeys keys(json, where);
  for (const auto& [key, out] : {std::pair{"vocab_size", &c.vocab_size}, {"hidden_size", &c.hidden_size},
                                 {"num_hidden_layers", &c.num_hidden_layers},
                                 {"num_attention_heads", &c.num_attention_heads},
                                 {"intermediate_size", &c.intermediate_size},
                                 {"max_position_embeddings", &c.max_position_embeddings},
                                 {"local_attention", &c.modern.local_attention}})
    keys.get(key, *out);
  ModernBertSettings& m = c.modern;
  for (const auto& [key, out] : {std::pair{"pad_token_id", &m.pad_token_id}, {"bos_token_id", &m.bos_token_id},
                                 {"eos_token_id", &m.eos_token_id}, {"cls_token_id", &m.cls_token_id},
                                 {"sep_token_id", &m.sep_token_id}})
    keys.get_token(key, *out);
  for (const auto& [key, out] : {std::pair{"initializer_range", &c.initializer_range}, {"norm_eps", &c.layer_norm_eps},
                                 {"attention_dropout", &c.attention_probs_dropout_prob},
                                 {"embedding_dropout", &m.embedding_dropout}, {"mlp_dropout", &m.mlp_dropout},
                                 {"classifier_dropout", &m.classifier_dropout},
                                 {"initializer_cutoff_factor", &m.initializer_cutoff_factor}})
    keys.get(key, *out);
  for (const auto& [key, out] : {std::pair{"norm_bias", &m.norm_bias}, {"attention_bias", &m.attention_bias},
                                 {"mlp_bias", &m.mlp_bias}, {"decoder_bias", &m.decoder_bias},
                                 {"classifier_bias", &m.classifier_bias}})
    keys.get(key, *out);
  for (const auto& [key, out] : {std::pair{"hidden_activation", &c.hidden_act},
                                 {"classifier_pooling", &m.classifier_pooling},
                                 {"classifier_activation", &m.classifier_activation}})
    keys.get(key, *out);
  bool tied = true;
  keys.get("tie_word_embeddings", tied);
  if (!tied) fail("{}: \"tie_word_embeddings\" false is not supported (the decoder is the token embeddings)", where);
  if (json.contains("rope_scaling") && !json["rope_scaling"].is_null())
    fail("{}: \"rope_scaling\" is not supported (only \"default\" rotary embeddings)", where);
  keys.rope_theta("full_attention", "global_rope_theta", m.global_rope_theta);
  keys.rope_theta("sliding_attention", "local_rope_theta", m.local_rope_theta);
  m.layer_types = keys.layer_types(c.num_hidden_layers);
  c.validate(where);
  return c;
}

void BertConfig::validate_modernbert(const std::string& where) const {
  const ModernBertSettings& m = modern;
  if (static_cast<int64_t>(m.layer_types.size()) != num_hidden_layers)
    fail("{}: \"layer_types\" lists {} layers, but \"num_hidden_layers\" is {}", where, m.layer_types.size(),
         num_hidden_layers);
  bool any_local = false;
  for (size_t i = 0; i < m.layer_types.size(); ++i) {
    if (m.layer_types[i] != "full_attention" && m.layer_types[i] != "sliding_attention")
      fail("{}: \"layer_types\"[{}] \"{}\" is neither \"full_attention\" nor \"sliding_attention\"", where, i,
           m.layer_types[i]);
    any_local = any_local || m.layer_types[i] == "sliding_attention";
  }
  if (any_local && (m.local_attention < 2 || m.local_attention > max_position_embeddings))
    fail("{}: \"local_attention\" {} must be from 2 to max_position_embeddings {} (a token sees local_attention / 2 "
         "positions each side)", where, m.local_attention, max_position_embeddings);
  for (auto [key, theta] : {std::pair{"rope_parameters.full_attention.rope_theta (global_rope_theta)", m.global_rope_theta},
                            {"rope_parameters.sliding_attention.rope_theta (local_rope_theta)", m.local_rope_theta}})
    if (!(theta > 0 && std::isfinite(theta))) fail("{}: \"{}\" must be positive and finite, got {}", where, key, theta);
  for (auto [key, act] : {std::pair{"hidden_activation", &hidden_act}, {"classifier_activation", &m.classifier_activation}})
    if (!known_activation(*act))
      fail("{}: \"{}\" \"{}\" is not supported (gelu, gelu_new, gelu_pytorch_tanh, gelu_tanh, relu, silu)", where, key,
           *act);
  if (m.classifier_pooling != "cls" && m.classifier_pooling != "mean")
    fail("{}: \"classifier_pooling\" \"{}\" is neither \"cls\" nor \"mean\"", where, m.classifier_pooling);
  if ((hidden_size / num_attention_heads) % 2 != 0)
    fail("{}: the head size {} (hidden_size / num_attention_heads) must be even for rotary embeddings", where,
         hidden_size / num_attention_heads);
  for (auto [key, p] : {std::pair{"embedding_dropout", m.embedding_dropout}, {"mlp_dropout", m.mlp_dropout},
                        {"classifier_dropout", m.classifier_dropout}})
    if (!(p >= 0 && p < 1)) fail("{}: \"{}\" must be in [0, 1), got {}", where, key, p);
  if (!(m.initializer_cutoff_factor > 0 && std::isfinite(m.initializer_cutoff_factor)))
    fail("{}: \"initializer_cutoff_factor\" must be positive and finite, got {}", where, m.initializer_cutoff_factor);
  // The padding id is the embedding's padding index, so it must be a row of it; the others only name tokens (as
  // transformers does, a file may keep ModernBERT's own ids with another vocabulary).
  if (m.pad_token_id < -1 || m.pad_token_id >= vocab_size)
    fail("{}: \"pad_token_id\" {} is outside the vocabulary of {} (null: no padding token)", where, m.pad_token_id,
         vocab_size);
  for (auto [key, id] : {std::pair{"bos_token_id", m.bos_token_id}, {"eos_token_id", m.eos_token_id},
                         {"cls_token_id", m.cls_token_id}, {"sep_token_id", m.sep_token_id}})
    if (id < -1) fail("{}: \"{}\" must be a token id or null, got {}", where, key, id);
}

nlohmann::json BertConfig::modernbert_hf_json() const {
  const ModernBertSettings& m = modern;
  auto token = [](int64_t id) { return id < 0 ? nlohmann::json(nullptr) : nlohmann::json(id); };
  auto rope = [](double theta) { return nlohmann::json{{"rope_theta", theta}, {"rope_type", "default"}}; };
  return {{"attention_bias", m.attention_bias}, {"attention_dropout", attention_probs_dropout_prob},
          {"bos_token_id", token(m.bos_token_id)}, {"classifier_activation", m.classifier_activation},
          {"classifier_bias", m.classifier_bias}, {"classifier_dropout", m.classifier_dropout},
          {"classifier_pooling", m.classifier_pooling}, {"cls_token_id", token(m.cls_token_id)},
          {"decoder_bias", m.decoder_bias}, {"deterministic_flash_attn", false}, {"dtype", "float32"},
          {"embedding_dropout", m.embedding_dropout}, {"eos_token_id", token(m.eos_token_id)},
          {"hidden_activation", hidden_act}, {"hidden_size", hidden_size},
          {"initializer_cutoff_factor", m.initializer_cutoff_factor}, {"initializer_range", initializer_range},
          {"intermediate_size", intermediate_size}, {"layer_types", m.layer_types},
          {"local_attention", m.local_attention}, {"max_position_embeddings", max_position_embeddings},
          {"mlp_bias", m.mlp_bias}, {"mlp_dropout", m.mlp_dropout}, {"norm_bias", m.norm_bias},
          {"norm_eps", layer_norm_eps}, {"num_attention_heads", num_attention_heads},
          {"num_hidden_layers", num_hidden_layers}, {"pad_token_id", token(m.pad_token_id)},
          {"rope_parameters", {{"full_attention", rope(m.global_rope_theta)},
                               {"sliding_attention", rope(m.local_rope_theta)}}},
          {"sep_token_id", token(m.sep_token_id)}, {"sparse_pred_ignore_index", -100}, {"sparse_prediction", false},
          {"tie_word_embeddings", true}, {"vocab_size", vocab_size}};
}

}  // namespace bk

#include "ckpt/bert_config.h"

#include "util/error.h"
#include "io/input.h"

namespace bk {

BertConfig BertConfig::load(const std::string& path) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
  return from_json(json, path);
}

BertConfig BertConfig::from_json(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) fail("{}: a BERT config must be a JSON object", where);
  BertConfig c;
  auto get_int = [&](const char* key, int64_t& out, bool required) {
    if (!json.contains(key)) {
      if (required) fail("{}: missing \"{}\"", where, key);
      return;
    }
    if (!json[key].is_number_integer()) fail("{}: \"{}\" must be an integer", where, key);
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
  if (!json.contains("hidden_act") || !json["hidden_act"].is_string()) fail("{}: missing \"hidden_act\"", where);
  c.hidden_act = json["hidden_act"].get<std::string>();
  c.validate(where);
  return c;
}

void BertConfig::validate(const std::string& where) const {
  for (auto [key, value] : {std::pair{"vocab_size", vocab_size}, {"hidden_size", hidden_size},
                            {"num_hidden_layers", num_hidden_layers}, {"num_attention_heads", num_attention_heads},
                            {"intermediate_size", intermediate_size}, {"max_position_embeddings", max_position_embeddings},
                            {"type_vocab_size", type_vocab_size}})
    if (value <= 0) fail("{}: \"{}\" must be positive, got {}", where, key, value);
  if (hidden_size % num_attention_heads != 0)
    fail("{}: hidden_size {} is not a multiple of num_attention_heads {}", where, hidden_size, num_attention_heads);
  if (hidden_act != "gelu" && hidden_act != "gelu_new" && hidden_act != "gelu_tanh" && hidden_act != "relu")
    fail("{}: hidden_act \"{}\" is not supported (gelu, gelu_new, gelu_tanh, relu)", where, hidden_act);
  for (auto [key, value] : {std::pair{"hidden_dropout_prob", hidden_dropout_prob},
                            {"attention_probs_dropout_prob", attention_probs_dropout_prob}})
    if (value < 0 || value >= 1) fail("{}: \"{}\" must be in [0, 1), got {}", where, key, value);
}

nlohmann::json BertConfig::to_json() const {
  return {{"attention_probs_dropout_prob", attention_probs_dropout_prob}, {"hidden_act", hidden_act},
          {"hidden_dropout_prob", hidden_dropout_prob}, {"hidden_size", hidden_size},
          {"initializer_range", initializer_range}, {"intermediate_size", intermediate_size},
          {"max_position_embeddings", max_position_embeddings}, {"num_attention_heads", num_attention_heads},
          {"num_hidden_layers", num_hidden_layers}, {"type_vocab_size", type_vocab_size},
          {"vocab_size", vocab_size}, {"layer_norm_eps", layer_norm_eps}};
}

nlohmann::json BertConfig::to_hf_json(const std::string& architecture, int64_t num_labels) const {
  nlohmann::json j = to_json();
  j["model_type"] = "bert";
  j["architectures"] = {architecture};
  for (int64_t i = 0; i < num_labels; ++i) {
    j["id2label"][std::to_string(i)] = "LABEL_" + std::to_string(i);
    j["label2id"]["LABEL_" + std::to_string(i)] = i;
  }
  j["pad_token_id"] = 0;
  j["position_embedding_type"] = "absolute";
  if (hidden_act == "gelu_tanh") j["hidden_act"] = "gelu_new";
  return j;
}

double BertConfig::training_flops_per_sequence(int64_t seq_len, int64_t predictions) const {
  const double s = static_cast<double>(seq_len), h = static_cast<double>(hidden_size);
  const double f = static_cast<double>(intermediate_size), l = static_cast<double>(num_hidden_layers);
  // Per layer and token: Q, K, V and output projections (4 h^2), two FFN matmuls (2 h f); attention scores and
  // the weighted sum (2 s h). Each multiply-add is 2 FLOPs.
  const double encoder = l * s * (2 * 4 * h * h + 2 * 2 * h * f + 2 * 2 * s * h);
  // MLM head on the masked positions: transform (h^2) and decoder (h V); NSP pooler (h^2) per sequence.
  const double head = static_cast<double>(predictions) * 2 * (h * h + h * static_cast<double>(vocab_size)) + 2 * h * h;
  return 3 * (encoder + head);
}

}  // namespace bk

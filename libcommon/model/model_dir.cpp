#include "model/model_dir.h"

#include "util/error.h"
#include "io/output.h"
#include "ckpt/convert.h"
#include "ckpt/tf_checkpoint.h"
#include "model/safetensors_torch.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace bk {

namespace {

// How an architecture's checkpoints name their parts (HF's names): the encoder's prefix, the heads any of its
// models may carry, the pretraining model's own heads, and what a bare encoder (saved without its prefix) holds.
struct CheckpointNames {
  std::string encoder;
  std::vector<std::string> heads, pretraining_heads;
  std::string bare_layers;
};

CheckpointNames checkpoint_names(const BertConfig& config) {
  if (config.is_modernbert())  // ModernBertForMaskedLM: model.*, head.*, decoder.bias; task models add classifier.*
    return {"model.", {"head.", "decoder.", "classifier."}, {"head.", "decoder."}, "layers."};
  return {"bert.", {"qa_outputs.", "classifier.", "cls."}, {"cls.predictions.", "cls.seq_relationship.", "bert.pooler."},
          "encoder.layer."};
}

}  // namespace

std::map<std::string, at::Tensor> load_weights(const std::string& weights_path, const BertConfig* config) {
  std::map<std::string, at::Tensor> out;
  if (is_torch_save_file(weights_path) || is_tf_checkpoint(weights_path)) {
    // ckpt-convert's reading (ckpt/convert.h): NVIDIA's and Google's names mapped, every shape checked against the
    // config (the one given, else the bert_config.json or config.json beside the file).
    LoadOptions options;
    options.config = config;
    for (const auto& t : load_canonical_checkpoint(weights_path, options).model) out[t.name] = to_torch(t).clone();
    return out;
  }
  for (auto& [name, tensor] : load_safetensors(weights_path)) {
    std::string key = name;
    if (key.ends_with("LayerNorm.gamma")) key.replace(key.size() - 5, 5, "weight");
    else if (key.ends_with("LayerNorm.beta")) key.replace(key.size() - 4, 4, "bias");
    out[key] = tensor;
  }
  return out;
}

std::shared_ptr<BertForPreTraining> load_model_dir(const std::string& path, const std::string& config_path,
                                                   bool strict) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail("{}: no such checkpoint directory or file", path);
  std::string weights, config = config_path;
  const bool config_given = !config.empty();
  if (fs::is_directory(path, ec)) {
    weights = (fs::path(path) / "model.safetensors").string();
    if (!fs::exists(weights, ec)) {
      if (fs::exists(fs::path(path) / "model.safetensors.index.json", ec))
        fail("{}: sharded safetensors checkpoints are not supported; save it as one model.safetensors", path);
      fail("{}: no model.safetensors (expected an HF or bertkit model directory)", path);
    }
    if (config.empty()) config = (fs::path(path) / "config.json").string();
  } else {
    weights = path;
    if (config.empty()) config = config_beside_file(path);
    if (config.empty()) fail("{}: no bert_config.json or config.json beside it (give one with --config)", path);
  }
  if (!fs::exists(config, ec)) fail("{}: no config.json (give one with --config)", config);
  const BertConfig cfg = BertConfig::load(config);
  auto model = std::make_shared<BertForPreTraining>(cfg);
  std::map<std::string, at::Tensor> tensors = load_weights(weights, config_given ? &cfg : nullptr);
  const auto has = [&](std::string_view prefix) {
    return std::any_of(tensors.begin(), tensors.end(), [&](const auto& kv) { return kv.first.starts_with(prefix); });
  };
  const CheckpointNames names = checkpoint_names(cfg);
  if (strict && !has(names.encoder) && has(names.bare_layers))
    fail("{}: a bare {} (transformers' save_pretrained of the encoder alone: no masked-LM head), whose masked-LM "
         "figures would be an untrained head's; evaluate a checkpoint bert-train wrote from it (--init-checkpoint)",
         weights, cfg.is_modernbert() ? "ModernBertModel" : "BertModel");
  model->load_state_dict(tensors, strict, weights);
  return model;
}

namespace {

bool starts_with_any(const std::string& name, const std::vector<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return name.starts_with(p); });
}

}  // namespace

std::string task_head_prefix(const BertConfig& config, bool spans) {
  return spans && !config.is_modernbert() ? "qa_outputs." : "classifier.";
}

HeadsInit load_encoder_and_heads(BertModelBase& model, std::map<std::string, at::Tensor> tensors,
                                 const HeadRule& rule, const std::string& where) {
  const CheckpointNames names = checkpoint_names(model.config());
  const std::vector<std::string>& kHeads = names.heads;
  // A bare encoder (transformers' BertModel.save_pretrained, ModernBertModel's) names its tensors without the
  // encoder's prefix, as from_pretrained takes them.
  const bool bare = std::none_of(tensors.begin(), tensors.end(),
                                 [&](const auto& kv) { return kv.first.starts_with(names.encoder); });
  HeadsInit init;
  std::map<std::string, at::Tensor> kept;
  for (auto& [name, t] : tensors) {
    const bool head = starts_with_any(name, kHeads);
    if (head && starts_with_any(name, rule.refused))
      fail("{}: holds the head {} of another task (this model's head is {}*): a checkpoint fine-tuned for something "
           "else", where, name, rule.own.front());
    const std::string key = bare && !head ? names.encoder + name : name;
    if (starts_with_any(key, rule.dropped)) init.dropped.push_back(key);
    else kept.emplace(key, t);
  }
  std::map<std::string, at::Tensor> own = model.state_dict();
  for (auto it = kept.begin(); it != kept.end();) {
    if (it->first.starts_with("bert.pooler.") && !own.count(it->first)) {
      init.dropped.push_back(it->first);
      it = kept.erase(it);
    } else {
      ++it;
    }
  }
  // A head the checkpoint has none of keeps the model's own initialisation; a partial head is an error (the strict
  // load below names what is missing).
  for (const std::string& prefix : rule.own) {
    const bool has_head = std::any_of(kept.begin(), kept.end(), [&](const auto& kv) { return kv.first.starts_with(prefix); });
    if (!has_head)
      for (const auto& [name, t] : own)
        if (name.starts_with(prefix)) {
          init.initialised.push_back(name);
          kept.emplace(name, t.clone());
        }
  }
  model.load_state_dict(kept, /*strict=*/true, where);
  return init;
}

HeadsInit load_finetune_weights(BertModelBase& model, std::map<std::string, at::Tensor> tensors,
                                const std::string& head_prefix, const std::string& where) {
  HeadRule rule;
  if (model.config().is_modernbert()) {
    // transformers' ModernBERT task models share head.* with the masked-LM model (from_pretrained keeps it) and
    // name both tasks' output layer classifier.*: a checkpoint of the other task shows in its shape.
    rule.own = {"head.", head_prefix};
    rule.dropped = {"decoder."};
    return load_encoder_and_heads(model, std::move(tensors), rule, where);
  }
  rule.own = {head_prefix};
  rule.dropped = {"cls."};
  rule.refused = {head_prefix == "qa_outputs." ? "classifier." : "qa_outputs."};
  return load_encoder_and_heads(model, std::move(tensors), rule, where);
}

HeadsInit load_pretraining_weights(BertModelBase& model, std::map<std::string, at::Tensor> tensors,
                                   const std::string& where) {
  HeadRule rule;
  rule.own = checkpoint_names(model.config()).pretraining_heads;
  rule.dropped = {"qa_outputs.", "classifier."};
  return load_encoder_and_heads(model, std::move(tensors), rule, where);
}

void save_model_dir(const std::string& dir, const BertForPreTraining& model, bool overwrite) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) fail("{}: cannot create the model directory", dir);
  const std::string config = (fs::path(dir) / "config.json").string();
  const std::string weights = (fs::path(dir) / "model.safetensors").string();
  check_overwrite(config, overwrite);
  check_overwrite(weights, overwrite);
  std::map<std::string, at::Tensor> tensors;
  for (auto& [name, t] : model.state_dict()) tensors[name] = t.to(at::kFloat);
  save_safetensors(weights, tensors, {{"format", "pt"}}, overwrite);
  write_file_atomic(config, model.config().to_hf_json().dump(2) + "\n", true);
}

}  // namespace bk

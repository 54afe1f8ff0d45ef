#include "model/bert_base.h"

#include "util/error.h"

#include <ATen/ATen.h>

#include <cmath>
#include <set>

namespace bk {

namespace {

// Tensors HF checkpoints may carry that a tied, buffer-free model does not need.
bool ignorable_key(const BertConfig& config, const std::string& name) {
  if (config.is_modernbert()) return name == "decoder.weight";  // ModernBertForMaskedLM's tied copy
  return name == "cls.predictions.decoder.weight" || name == "cls.predictions.decoder.bias" ||
         name == "bert.embeddings.position_ids";
}

// torch.nn.init.trunc_normal_'s method: uniform between the bounds' normal CDFs, mapped back by the inverse CDF.
void truncated_normal_(const at::Tensor& t, double std, double cutoff) {
  const auto cdf = [](double x) { return (1 + std::erf(x / std::sqrt(2.0))) / 2; };
  t.uniform_(2 * cdf(-cutoff) - 1, 2 * cdf(cutoff) - 1).erfinv_().mul_(std * std::sqrt(2.0)).clamp_(-cutoff * std, cutoff * std);
}

// HF's ModernBertPreTrainedModel._init_weights: weights ~ normal truncated at +-cutoff std, with std
// initializer_range for the embeddings and the input projections (Wqkv, Wi), initializer_range / sqrt(2 layers)
// for the output projections (attn.Wo, mlp.Wo) and the MLM head's dense, hidden^-0.5 for a task classifier;
// norms 1, biases 0.
void reset_modernbert_parameter(const BertConfig& config, const std::string& name, const at::Tensor& t) {
  if (name.ends_with(".bias")) {
    t.zero_();
    return;
  }
  if (name.ends_with("norm.weight")) {
    t.fill_(1.0);
    return;
  }
  const double range = config.initializer_range, cutoff = config.modern.initializer_cutoff_factor;
  double std = range;
  if (name.ends_with("Wo.weight") || name == "head.dense.weight")
    std = range / std::sqrt(2.0 * static_cast<double>(config.num_hidden_layers));
  else if (name.starts_with("classifier."))
    std = 1 / std::sqrt(static_cast<double>(config.hidden_size));
  truncated_normal_(t, std, cutoff);
}

std::string shape_text(at::IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string join_keys(const std::vector<std::string>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

}  // namespace

namespace {

const BertConfig& validated(const BertConfig& config, const char* name) {
  config.validate(name);
  return config;
}

}  // namespace

BertModelBase::BertModelBase(const char* name, const BertConfig& config)
    : torch::nn::Module(name), config_(validated(config, name)), padded_vocab_(config_.padded_vocab_size(8)), params_(*this) {}

void BertModelBase::reset_parameters() {
  at::NoGradGuard no_grad;
  const double std = config_.initializer_range;
  for (const auto& [name, t] : params_.list()) {
    if (config_.is_modernbert()) {
      reset_modernbert_parameter(config_, name, t);
      continue;
    }
    const bool layer_norm = name.find("LayerNorm.") != std::string::npos;
    if (layer_norm) {
      if (name.ends_with(".weight")) t.fill_(1.0);
      else t.zero_();
    } else if (name.ends_with(".bias")) {
      t.zero_();
    } else {
      t.normal_(0.0, std);
    }
  }
  for (const auto& rows : vocab_rows_)
    if (rows.dim() == 2 && padded_vocab_ > config_.vocab_size)
      rows.narrow(0, config_.vocab_size, padded_vocab_ - config_.vocab_size).zero_();
}

bool BertModelBase::is_vocab_rows(const at::Tensor& t) const {
  for (const auto& rows : vocab_rows_)
    if (t.is_same(rows)) return true;
  return false;
}

std::map<std::string, at::Tensor> BertModelBase::state_dict() const {
  std::map<std::string, at::Tensor> out;
  for (const auto& [name, t] : params_.list()) {
    at::Tensor v = t.detach();
    if (is_vocab_rows(t)) v = v.narrow(0, 0, config_.vocab_size);
    out.emplace(name, v);
  }
  return out;
}

void BertModelBase::load_state_dict(const std::map<std::string, at::Tensor>& tensors, bool strict,
                                         const std::string& where) {
  std::vector<std::string> missing, unexpected;
  std::set<std::string> known;
  for (const auto& p : params_.list()) {
    known.insert(p.name);
    if (!tensors.count(p.name)) missing.push_back(p.name);
  }
  for (const auto& [name, t] : tensors)
    if (!known.count(name) && !ignorable_key(config_, name)) unexpected.push_back(name);
  if (strict && (!missing.empty() || !unexpected.empty())) {
    std::string msg = where + ": does not match the model";
    if (!missing.empty()) msg += "; missing keys (" + std::to_string(missing.size()) + "): " + join_keys(missing);
    if (!unexpected.empty())
      msg += "; unexpected keys (" + std::to_string(unexpected.size()) + "): " + join_keys(unexpected);
    fail("{}", msg);
  }
  // Check every shape before copying anything, so a failed load leaves the model as it was.
  for (const auto& p : params_.list()) {
    auto it = tensors.find(p.name);
    if (it == tensors.end()) continue;
    const bool vocab_rows = is_vocab_rows(p.tensor);
    std::vector<int64_t> want = p.tensor.sizes().vec();
    if (vocab_rows) want[0] = config_.vocab_size;
    if (!it->second.defined() || it->second.sizes().vec() != want)
      fail("{}: tensor {} has shape {}, but the config needs {}", where, p.name,
           it->second.defined() ? shape_text(it->second.sizes()) : "undefined", shape_text(want));
    if (!at::isFloatingType(it->second.scalar_type()))
      fail("{}: tensor {} has dtype {}, expected a floating-point type", where, p.name,
           c10::toString(it->second.scalar_type()));
  }
  at::NoGradGuard no_grad;
  for (const auto& p : params_.list()) {
    auto it = tensors.find(p.name);
    if (it == tensors.end()) continue;
    const bool vocab_rows = is_vocab_rows(p.tensor);
    if (vocab_rows) {
      p.tensor.narrow(0, 0, config_.vocab_size).copy_(it->second);
      if (padded_vocab_ > config_.vocab_size) p.tensor.narrow(0, config_.vocab_size, padded_vocab_ - config_.vocab_size).zero_();
    } else {
      p.tensor.copy_(it->second);
    }
  }
}

}  // namespace bk

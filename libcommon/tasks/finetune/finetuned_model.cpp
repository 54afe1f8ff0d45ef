#include "tasks/finetune/finetuned_model.h"

#include "model/finetune_models.h"
#include "model/model_dir.h"
#include "ckpt/checkpoint_path.h"
#include "util/error.h"
#include "util/printable.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace bk {

namespace fs = std::filesystem;

namespace {

// A SQuAD window setting task.json records (0 when it has none: a checkpoint from before they were recorded).
int windows_setting(const nlohmann::json& described, const char* key, const std::string& where) {
  if (!described.contains(key)) return 0;
  const nlohmann::json& value = described[key];
  if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > (1 << 20))
    fail("{}: \"{}\" must be a positive integer, got {}", where, key, printable_excerpt(value.dump()));
  return static_cast<int>(value.get<int64_t>());
}

}  // namespace

FinetunedModel load_finetuned_model(const std::string& named, const std::string& task, const at::Device& device) {
  const std::string path = resolve_checkpoint(named);
  FinetunedModel m;
  m.info = &finetune_task_info(task);
  m.device = device;
  const fs::path dir(path);
  if (!fs::is_directory(dir)) fail("{}: not a checkpoint directory", path);
  for (const char* required : {"config.json", "model.safetensors"})
    if (!fs::exists(dir / required)) fail("{}: no {}", path, required);
  const BertConfig config = BertConfig::load((dir / "config.json").string());
  m.max_seq_length = config.max_position_embeddings;
  const nlohmann::json described = read_checkpoint_task(path);
  if (!described.is_null()) {
    const std::string where = (dir / "task.json").string();
    if (!described.is_object()) fail("{}: not a JSON object", where);
    if (!described.contains("task") || !described["task"].is_string()) fail("{}: no \"task\" string", where);
    const std::string other = described["task"].get<std::string>();
    if (other != m.info->name)
      fail("{}: a checkpoint fine-tuned for {}, not for {}", path, printable_excerpt(other), m.info->name);
    if (described.contains("max_seq_length")) {
      const nlohmann::json& length = described["max_seq_length"];
      if (!length.is_number_integer() || length.get<int64_t>() < 2 ||
          length.get<int64_t>() > config.max_position_embeddings)
        fail("{}: \"max_seq_length\" must be an integer from 2 to the model's {} positions, got {}", where,
             config.max_position_embeddings, printable_excerpt(length.dump()));
      m.fine_tuned_length = length.get<int64_t>();
      m.max_seq_length = m.fine_tuned_length;
    }
    m.fine_tuned_doc_stride = windows_setting(described, "doc_stride", where);
    m.fine_tuned_max_query_length = windows_setting(described, "max_query_length", where);
  }
  const std::string weights = (dir / "model.safetensors").string();
  auto tensors = load_weights(weights);
  const std::string head = task_head_prefix(config, m.info->kind == FinetuneKind::span) + "weight";
  if (!tensors.count(head))
    fail("{}: no {} tensor: not a model fine-tuned for {} (bert-finetune train makes one)", weights, head, m.info->name);
  if (m.info->kind == FinetuneKind::span) {
    m.qa = std::make_shared<BertForQuestionAnswering>(config);
    m.base = m.qa.get();
  } else {
    m.classifier = std::make_shared<BertForSequenceClassification>(config, m.info->num_labels());
    m.base = m.classifier.get();
  }
  m.base->load_state_dict(tensors, /*strict=*/true, weights);
  m.base->to(device);
  m.base->eval();
  return m;
}

SpanLogits FinetunedModel::spans(const at::Tensor& ids, const at::Tensor& segments, const at::Tensor& mask) const {
  at::NoGradGuard no_grad;
  SpanLogits l = qa->forward(ids, segments, mask);
  return {l.start.to(at::kFloat), l.end.to(at::kFloat)};
}

at::Tensor FinetunedModel::classes(const at::Tensor& ids, const at::Tensor& segments, const at::Tensor& mask) const {
  at::NoGradGuard no_grad;
  return classifier->forward(ids, segments, mask).to(at::kFloat);
}

}  // namespace bk

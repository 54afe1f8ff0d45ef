#include "tasks/bert_task.h"

#include "model/bert_base.h"

#include <ATen/Tensor.h>

namespace bk {

torch::nn::Module& BertModelTask::model() { return bert(); }

NamedTensors BertModelTask::parameters() const {
  NamedTensors named;
  for (const auto& p : bert().named_parameter_list()) named.emplace_back(p.name, p.tensor);
  return named;
}

std::vector<int64_t> BertModelTask::parameter_rows() const {
  std::vector<int64_t> rows;
  for (const auto& p : bert().named_parameter_list())
    rows.push_back(p.tensor.dim() > 0 ? bert().real_rows(p.tensor) : 1);
  return rows;
}

std::map<std::string, at::Tensor> BertModelTask::model_state() const { return bert().state_dict(); }

void BertModelTask::load_model_state(const std::map<std::string, at::Tensor>& tensors, const std::string& where) {
  bert().load_state_dict(tensors, /*strict=*/true, where);
}

}  // namespace bk

// What every task over a BERT model (model/bert_base.h) gives the training loop the same way: the module, its
// parameters under their HF names, its tensors for checkpoints and a strict load of them. The pretraining and
// fine-tuning tasks derive from it and say which model they hold.
#pragma once

#include "train/loop/task.h"

namespace bk {

class BertModelBase;

class BertModelTask : public TrainingTask {
 public:
  torch::nn::Module& model() override;
  NamedTensors parameters() const override;
  std::vector<int64_t> parameter_rows() const override;
  std::map<std::string, at::Tensor> model_state() const override;
  void load_model_state(const std::map<std::string, at::Tensor>& tensors, const std::string& where) override;

 protected:
  // The task's model (built in start()).
  virtual BertModelBase& bert() const = 0;
};

}  // namespace bk

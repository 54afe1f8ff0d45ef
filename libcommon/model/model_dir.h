// Model directories: what bert-eval reads, bert-train's --init-checkpoint reads and writes, and transformers opens.
//
// A model directory holds config.json (a BERT config: Google's keys, plus HF's when we write it) and
// model.safetensors (HF parameter names, true vocabulary size, any float dtype). HF's save_pretrained output and a
// bertkit native checkpoint (which adds optimizer.safetensors and trainer_state.json) are both model directories.
#pragma once

#include "model_config/bert_config.h"
#include "model/bert.h"
#include "model/bert_base.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace bk {

// Loads a model from a directory (config.json + model.safetensors), or from a .safetensors file with its config
// given as config_path (default: config.json beside the file). config_path, when set, overrides the directory's.
// strict: every parameter must be present and no other tensor (see BertForPreTraining::load_state_dict).
// Errors name the file, and the tensors for missing/unexpected keys and shape mismatches.
std::shared_ptr<BertForPreTraining> load_model_dir(const std::string& path, const std::string& config_path = "",
                                                   bool strict = true);

// The tensors of a checkpoint's model.safetensors (or the file itself), with the old TF-style LayerNorm names
// (gamma/beta) renamed to weight/bias as transformers does; or of a torch.save file (.pt, .pth, .bin: NVIDIA's
// checkpoints, HF's pytorch_model.bin) read as ckpt-convert reads it, its shapes checked against `config` (the
// model's, when the caller has one) or else the config beside it.
std::map<std::string, at::Tensor> load_weights(const std::string& weights_path, const BertConfig* config = nullptr);

// What load_finetune_weights did besides copying: the head it left as initialised, the tensors it set aside.
struct FinetuneInit {
  std::vector<std::string> initialised;  // the task head's tensors the checkpoint lacked (BERT's initialisation)
  std::vector<std::string> dropped;      // other heads (pretraining, a pooler the model has none of)
};

// Loads a checkpoint's tensors into a fine-tuning model whose task head is named `head_prefix` ("qa_outputs." or
// "classifier."). The tensors may come from a pretraining checkpoint (bertkit or HF BertForPreTraining: the
// pretraining heads cls.* are set aside), a bare BertModel saved by transformers (keys without "bert."), or a model
// fine-tuned for the same task. Only the task head may be missing; any other missing or unexpected tensor is an
// error listing them, and so is the head of another task (a checkpoint fine-tuned for something else). `where`
// names the file in errors.
FinetuneInit load_finetune_weights(BertModelBase& model, std::map<std::string, at::Tensor> tensors,
                                   const std::string& head_prefix, const std::string& where);

// Writes DIR/config.json (HF's config, which keeps Google's keys) and DIR/model.safetensors (fp32, HF names, true
// vocabulary; the tied decoder left out as save_pretrained does), each atomically. Creates DIR if needed; refuses
// to replace existing files unless overwrite.
void save_model_dir(const std::string& dir, const BertForPreTraining& model, bool overwrite = false);

}  // namespace bk

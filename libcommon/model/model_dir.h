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

// What loading an encoder and its heads did besides copying: the heads it left as initialised, the tensors it set
// aside.
struct HeadsInit {
  std::vector<std::string> initialised;  // a head's tensors the checkpoint lacked (BERT's initialisation)
  std::vector<std::string> dropped;      // other heads (pretraining, a pooler the model has none of)
};

// Which heads a model has and which a checkpoint may bring: `own` prefixes are the model's heads, initialised as
// BERT initialises them when the checkpoint has none of one (a partial head is an error); `dropped` are other
// heads set aside; `refused` heads say the checkpoint was fine-tuned for something else (an error).
struct HeadRule {
  std::vector<std::string> own, dropped, refused;
};

// Loads a checkpoint's tensors into `model`: bertkit's and HF's names, or a bare BertModel saved by transformers
// (keys without "bert.", mapped as from_pretrained maps them), its heads by `rule`. Any other missing or unexpected
// tensor is an error listing them. `where` names the file in errors.
HeadsInit load_encoder_and_heads(BertModelBase& model, std::map<std::string, at::Tensor> tensors,
                                 const HeadRule& rule, const std::string& where);

// The prefix of a task model's output layer: BERT's qa_outputs. (spans) or classifier., ModernBERT's classifier.
std::string task_head_prefix(const BertConfig& config, bool spans);

// A fine-tuning model whose task head is `head_prefix` (task_head_prefix): from a pretraining
// checkpoint (bertkit or HF BertForPreTraining: cls.* set aside), a bare BertModel, or a model fine-tuned for the
// same task; the head of another task is an error.
HeadsInit load_finetune_weights(BertModelBase& model, std::map<std::string, at::Tensor> tensors,
                                const std::string& head_prefix, const std::string& where);

// BertForPreTraining: from its own checkpoints, HF's BertForPreTraining or BertForMaskedLM (the NSP head then
// initialised), a bare BertModel (both heads and, without one, the pooler initialised; the decoder stays tied to
// the word embeddings), or a fine-tuned model (its task head set aside).
HeadsInit load_pretraining_weights(BertModelBase& model, std::map<std::string, at::Tensor> tensors,
                                   const std::string& where);

// Writes DIR/config.json (HF's config, which keeps Google's keys) and DIR/model.safetensors (fp32, HF names, true
// vocabulary; the tied decoder left out as save_pretrained does), each atomically. Creates DIR if needed; refuses
// to replace existing files unless overwrite.
void save_model_dir(const std::string& dir, const BertForPreTraining& model, bool overwrite = false);

}  // namespace bk

// Model directories: what bert-eval reads, bert-train's --init-checkpoint reads and writes, and transformers opens.
//
// A model directory holds config.json (a BERT config: Google's keys, plus HF's when we write it) and
// model.safetensors (HF parameter names, true vocabulary size, any float dtype). HF's save_pretrained output and a
// bertkit native checkpoint (which adds optimizer.safetensors and trainer_state.json) are both model directories.
#pragma once

#include "ckpt/bert_config.h"
#include "model/bert.h"

#include <map>
#include <memory>
#include <string>

namespace bk {

// Loads a model from a directory (config.json + model.safetensors), or from a .safetensors file with its config
// given as config_path (default: config.json beside the file). config_path, when set, overrides the directory's.
// strict: every parameter must be present and no other tensor (see BertForPreTraining::load_state_dict).
// Errors name the file, and the tensors for missing/unexpected keys and shape mismatches.
std::shared_ptr<BertForPreTraining> load_model_dir(const std::string& path, const std::string& config_path = "",
                                                   bool strict = true);

// The tensors of a checkpoint's model.safetensors (or the file itself), with the old TF-style LayerNorm names
// (gamma/beta) renamed to weight/bias as transformers does.
std::map<std::string, at::Tensor> load_model_tensors(const std::string& safetensors_path);

// Writes DIR/config.json (HF's config, which keeps Google's keys) and DIR/model.safetensors (fp32, HF names, true
// vocabulary; the tied decoder left out as save_pretrained does), each atomically. Creates DIR if needed; refuses
// to replace existing files unless overwrite.
void save_model_dir(const std::string& dir, const BertForPreTraining& model, bool overwrite = false);

}  // namespace bk

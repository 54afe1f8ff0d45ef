// ckpt-convert's library side (torch-free; the run is ckpt_convert.h): reading a BERT pretraining checkpoint in any of the formats we know
// into one canonical tensor set, and writing it out again.
//
// Canonical set: the parameters of BertForPreTraining, BertForQuestionAnswering or BertForSequenceClassification
// (whichever head the input holds; ckpt/name_mapping.h) under HF names, float32, true vocabulary
// size, HF layout (Linear weights [out, in]), in bert_pretraining_tensors() order; optionally Adam's moments as
// "<name>.exp_avg" / "<name>.exp_avg_sq" in the same order and layout.
//
// Inputs: a TF1 checkpoint prefix (PREFIX.index + PREFIX.data-*), a directory holding model.safetensors and
// config.json (a native checkpoint: Google's config keys, optional optimizer.safetensors; or an HF save_pretrained
// directory), or a torch.save file (NVIDIA's .pt checkpoints, HF's pytorch_model.bin, our --to pt) with its config
// beside it. Outputs: native (directory), hf (directory), pt (one torch.load-able file, written by a callback
// because only that part needs LibTorch).
#pragma once

#include "model_config/bert_config.h"
#include "ckpt/name_mapping.h"
#include "ckpt/safetensors.h"

#include <functional>
#include <string>
#include <vector>

namespace bk {

class Progress;

struct LoadedCheckpoint {
  BertConfig config;
  std::string config_path;
  std::vector<StTensor> model;      // canonical parameters
  std::vector<StTensor> optimizer;  // Adam moments (only when asked for and present)
  std::vector<std::string> unmapped;
  int dropped_training_state = 0;   // TF bookkeeping variables and (unless kept) optimizer slots skipped
  BertHead head = BertHead::pretraining;  // from the head tensors present (name_mapping.h)
  int64_t num_labels = 0;           // the classifier's rows
  int dropped_pooler = 0;           // a question-answering checkpoint's pooler (HF's class has none)
};

// Whether a ModernBERT checkpoint with a classifier is ModernBertForQuestionAnswering (both of its task classes name
// their output layer classifier): its task.json's task (a bertkit fine-tuning run's), else its config.json's
// architectures (transformers'). `checkpoint` is its directory or weights file.
bool modernbert_checkpoint_is_spans(const std::string& checkpoint, const std::string& config_path);

// A regular file named .pt, .pth or .bin: a torch.save file for load_canonical_checkpoint (ckpt/torch_save.h).
bool is_torch_save_file(const std::string& path);

// The config beside a weights file: bert_config.json (NVIDIA's and Google's name), else config.json; empty when
// neither is there.
std::string config_beside_file(const std::string& path);

struct LoadOptions {
  std::string config_path;  // empty: bert_config.json or config.json beside the input
  // The model's config when the caller has it already (bert-train's and bert-eval's --config, a preset
  // included): used instead of any file.
  const BertConfig* config = nullptr;
  bool keep_optimizer = false;
  bool allow_unmapped = false;
  Progress* progress = nullptr;  // tensors read of those to read, on a terminal (io/progress.h)
};

// Reads and checks everything: names mapped, shapes against the config (before any data is read), dtypes converted
// to float32, each TF tensor's CRC32C. Throws bk::Error naming the tensor and the file.
LoadedCheckpoint load_canonical_checkpoint(const std::string& input, const LoadOptions& options);

// Lines "NAME (DT_FLOAT) [30522,128]" for every tensor of a TF1 checkpoint (as TF's inspect_checkpoint prints
// them), followed by a blank line and "# Total number of params: N"; reads only the index. For a safetensors
// directory the dtype is the safetensors one, "(F32)".
std::string list_checkpoint(const std::string& input);

// The tensors with vocabulary rows padded with zeros to a multiple of `multiple` (no-op for 0 or 1).
void pad_vocab_rows(std::vector<StTensor>& tensors, int64_t multiple);

// The state dict transformers' BertForPreTraining.state_dict() holds: the canonical set plus the tied decoder
// weight and bias as copies.
std::vector<StTensor> hf_state_dict(const std::vector<StTensor>& model);

// The canonical set and its Adam moments under google-research/bert's TF variable names (map_hf_name): Linear
// weights transposed back to dense kernels [in, out]; "<name>.exp_avg" / "<name>.exp_avg_sq" as VAR/adam_m and
// VAR/adam_v, transposed like VAR. Consumes its inputs (a BERT-large with moments is not held twice). bk::Error for
// a tensor with no TF name.
std::vector<StTensor> to_tf_variables(std::vector<StTensor> model, std::vector<StTensor> optimizer);

using PtWriter = std::function<void(const std::string& path, const std::vector<StTensor>& state_dict, bool overwrite)>;

}  // namespace bk

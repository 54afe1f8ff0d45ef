// Native checkpoints: what the loop (bert-train) writes and reads back with --resume, and what --init-checkpoint,
// bert-eval and ckpt-convert read.
//
// A checkpoint is a directory OUTPUT_DIR/checkpoints/step-00000020/ holding
//   model.safetensors      the model's parameters under HF names, true vocab size, float32
//   config.json            the model's bert_config (Google keys)
//   optimizer.safetensors  the optimizer's named state (moments), when there is one
//   trainer_state.json     step, loss scaler, random-generator states, data position, the run's settings
//   task.json              a fine-tuned model's task and labels (not written for pretraining)
//   vocab.txt, tokenizer_config.json, special_tokens_map.json   the tokenizer, when the run knows it
// It is written in a temporary directory beside it and renamed into place, so a checkpoint directory is always
// complete; OUTPUT_DIR/checkpoints/latest (a one-line file, replaced atomically) names the newest one. Only
// rank 0 writes. After a save, all but the newest `keep` step directories are removed.
#pragma once

#include "ckpt/checkpoint_path.h"

#include "model_config/bert_config.h"
#include "ckpt/tokenizer_files.h"

#include <ATen/Tensor.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace bk {

struct Checkpoint {
  BertConfig config;
  std::map<std::string, at::Tensor> model;
  std::map<std::string, at::Tensor> optimizer;  // empty: none saved
  nlohmann::json state = nlohmann::json::object();
  nlohmann::json task;  // null: no task.json
  NamedFiles tokenizer;  // vocab.txt, tokenizer_config.json, special_tokens_map.json (written when known)
  std::string path;  // the directory it was read from or written to
};

// Writes a checkpoint directory at `dir` (built under a temporary name beside it and renamed into place, replacing
// an older one of the same name).
void write_checkpoint_dir(const std::string& dir, const Checkpoint& checkpoint);

// Writes step's checkpoint under output_dir/checkpoints and prunes old ones; returns its directory.
std::string save_checkpoint(const std::string& output_dir, int64_t step, const Checkpoint& checkpoint, int keep);

// Reads a checkpoint directory (optimizer and trainer state only if present). Errors name the directory and file.
Checkpoint read_checkpoint_dir(const std::string& dir, bool with_optimizer = true);


// The bytes of a CPU tensor (a generator state) as base64 for trainer_state.json, and back.
std::string tensor_to_base64(const at::Tensor& bytes);
at::Tensor tensor_from_base64(const std::string& text);

}  // namespace bk

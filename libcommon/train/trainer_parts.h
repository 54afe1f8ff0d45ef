// Pieces of the training loop (train/trainer.cpp) kept apart so each file stays readable: precision, metrics,
// and the trainer state that checkpoints carry.
#pragma once

#include "ckpt/bert_config.h"
#include "train/data_loader.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace bk {

enum class Precision { fp32, bf16, fp16 };
Precision parse_precision(const std::string& name, const at::Device& device);

// Autocast for the forward pass (bf16 and fp16); restores the previous state when destroyed.
class AutocastScope {
 public:
  AutocastScope(Precision precision, const at::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  at::DeviceType device_type_;
  bool was_enabled_ = false;
  at::ScalarType previous_dtype_;
};

// Peak dense matmul FLOP/s of the device for MFU (0 when unknown): --peak-tflops, else a table of known GPUs.
double peak_flops(const at::Device& device, Precision precision, double peak_tflops_flag);

// The random-generator states of this process (CPU, and every CUDA device in use) as JSON, and back.
nlohmann::json generator_states(const at::Device& device);
void restore_generator_states(const nlohmann::json& states, const at::Device& device);

// The tokens of a batch must exist in the model's vocabulary: a clear error instead of an index error deep inside.
void check_vocabulary(const PretrainBatch& batch, const BertConfig& config, int64_t step);

}  // namespace bk

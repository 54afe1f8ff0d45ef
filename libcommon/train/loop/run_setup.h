// The device side of a training run, for the loop (loop.cpp): which device a rank uses, the precision and its
// autocast, the device's peak FLOP/s for MFU, and the random-generator states that checkpoints carry.
#pragma once

#include "launch/dist_env.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace bk {

// "cpu", or "cuda" (the GPU LOCAL_RANK picks, modulo the devices present); bk::UsageError for anything else,
// bk::Error when CUDA is asked for but absent.
at::Device pick_device(const std::string& name, const DistEnv& env);

// The NUMA node the system reports for a CUDA device (from its PCI address in /sys), or -1.
int cuda_device_numa_node(const at::Device& device);

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

}  // namespace bk

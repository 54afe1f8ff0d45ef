#include "train/loop/run_setup.h"

#include "util/error.h"
#include "train/loop/checkpoint.h"

#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/cuda.h>

#include <c10/util/Backtrace.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace bk {

namespace {

// Under BERTKIT_CUDA_SYNC_DEBUG=warn: each of torch's sync warnings on stderr with the call stack that made it, so
// a host sync can be traced to its operation (frames in this binary print as offsets: symbolize with addr2line).
class SyncBacktraceHandler : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override {
    std::fprintf(stderr, "host sync: %s\n%s\n", warning.msg().c_str(),
                 c10::get_backtrace(/*frames_to_skip=*/2, /*maximum_number_of_frames=*/24).c_str());
  }
};

}  // namespace

at::Device pick_device(const std::string& name, const DistEnv& env) {
  if (name == "cpu") return at::Device(at::kCPU);
  if (name == "cuda") {
    if (!torch::cuda::is_available()) fail("--device cuda: no CUDA device is available on this machine");
    const auto index = static_cast<at::DeviceIndex>(env.local_rank % torch::cuda::device_count());
    // The rank's device becomes the current one before anything allocates on CUDA: otherwise every rank's first
    // context, cuBLAS handle and NCCL communicator setup land on device 0.
    c10::cuda::set_device(index);
    // Attention dropout must be the configured probability: some cuDNN versions' SDPA kernels round it to a
    // multiple of 1/16 (0.1 becomes 0.0625 or 0.125). Without cuDNN, the padded path's SDPA takes the
    // memory-efficient kernel, which drops with the exact probability (0.0997 measured at p = 0.1 on an H200). The
    // unpadded path's flash varlen kernel keeps an element when a random byte is at most floor(255 (1 - p)), so it
    // drops 1 - 230/256 = 0.1016 at p = 0.1 (0.1013 +- 0.0003 measured) and scales survivors by 1 / (1 - p):
    // attention outputs are 0.17% smaller in expectation. torch_unit's cuda cases measure both.
    at::globalContext().setSDPUseCuDNN(false);
    // BERTKIT_CUDA_SYNC_DEBUG=warn|error: torch's sync debug mode, one warning (or an error) for every operation
    // that makes the host wait for the GPU; bench/bert_train_gpu.sh counts them per step.
    if (const char* mode = std::getenv("BERTKIT_CUDA_SYNC_DEBUG")) {
      const std::string m = mode;
      if (m == "warn") {
        c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_WARN);
        static SyncBacktraceHandler handler;
        c10::WarningUtils::set_warning_handler(&handler);
      } else if (m == "error") {
        c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
      } else if (!m.empty()) {
        usage_fail("BERTKIT_CUDA_SYNC_DEBUG must be warn or error, got '{}'", m);
      }
    }
    return at::Device(at::kCUDA, index);
  }
  usage_fail("--device must be cpu or cuda, got '{}'", name);
}

int cuda_device_numa_node(const at::Device& device) {
  if (!device.is_cuda()) return -1;
  const cudaDeviceProp* props = at::cuda::getDeviceProperties(device.index());
  std::ifstream in(fmt::format("/sys/bus/pci/devices/{:04x}:{:02x}:{:02x}.0/numa_node", props->pciDomainID,
                               props->pciBusID, props->pciDeviceID));
  int node = -1;
  in >> node;
  return in ? node : -1;
}

Precision parse_precision(const std::string& name, const at::Device& device) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  if (name == "fp16") {
    if (!device.is_cuda()) usage_fail("--precision fp16 needs --device cuda (use bf16 on the CPU)");
    return Precision::fp16;
  }
  usage_fail("--precision must be fp32, bf16 or fp16, got '{}'", name);
}

AutocastScope::AutocastScope(Precision precision, const at::Device& device) : device_type_(device.type()) {
  if (precision == Precision::fp32) return;
  active_ = true;
  was_enabled_ = at::autocast::is_autocast_enabled(device_type_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
  at::autocast::set_autocast_enabled(device_type_, true);
  at::autocast::set_autocast_dtype(device_type_, precision == Precision::bf16 ? at::kBFloat16 : at::kHalf);
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  at::autocast::set_autocast_enabled(device_type_, was_enabled_);
  at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
  at::autocast::clear_cache();
}

double peak_flops(const at::Device& device, Precision precision, double peak_tflops_flag) {
  if (peak_tflops_flag > 0) return peak_tflops_flag * 1e12;
  if (!device.is_cuda()) return 0;
  // Dense (no sparsity) tensor-core peaks from NVIDIA's data sheets; fp32 runs on TF32 at best.
  const std::string name = at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index())->name;
  const bool half = precision != Precision::fp32;
  if (name.find("H100") != std::string::npos || name.find("H200") != std::string::npos) return half ? 989e12 : 494e12;
  if (name.find("A100") != std::string::npos) return half ? 312e12 : 156e12;
  return 0;
}

nlohmann::json generator_states(const at::Device& device) {
  nlohmann::json states;
  auto cpu = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    states["cpu"] = tensor_to_base64(cpu.get_state());
  }
  if (device.is_cuda()) {
    auto cuda = at::cuda::detail::getDefaultCUDAGenerator(device.index() < 0 ? 0 : device.index());
    std::lock_guard<std::mutex> lock(cuda.mutex());
    states["cuda"] = tensor_to_base64(cuda.get_state());
  }
  return states;
}

void restore_generator_states(const nlohmann::json& states, const at::Device& device) {
  if (states.contains("cpu")) {
    auto cpu = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(cpu.mutex());
    cpu.set_state(tensor_from_base64(states["cpu"].get<std::string>()));
  }
  if (device.is_cuda() && states.contains("cuda")) {
    auto cuda = at::cuda::detail::getDefaultCUDAGenerator(device.index() < 0 ? 0 : device.index());
    std::lock_guard<std::mutex> lock(cuda.mutex());
    cuda.set_state(tensor_from_base64(states["cuda"].get<std::string>()));
  }
}

}  // namespace bk

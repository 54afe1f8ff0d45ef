#include "device/device.h"

#include "util/error.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/util/Backtrace.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>

#include <fmt/format.h>

#include <charconv>
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

// BERTKIT_CUDA_SYNC_DEBUG=warn|error: torch's sync debug mode, one warning (or an error) for every operation that
// makes the host wait for the GPU; bench/bert_train_gpu.sh counts them per step.
void set_sync_debug_mode() {
  const char* mode = std::getenv("BERTKIT_CUDA_SYNC_DEBUG");
  if (mode == nullptr) return;
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

}  // namespace

at::Device choose_device(const std::string& name, const DistEnv& env) {
  if (name == "cpu") return at::Device(at::kCPU);
  int index = -1;
  if (name.starts_with("cuda:")) {
    const char* digits = name.data() + 5;
    const auto [end, ec] = std::from_chars(digits, name.data() + name.size(), index);
    if (ec != std::errc() || end != name.data() + name.size() || end == digits || index < 0)
      usage_fail("--device must be cpu, cuda or cuda:N, got '{}'", name);
  } else if (name != "cuda") {
    usage_fail("--device must be cpu, cuda or cuda:N, got '{}'", name);
  }
  if (!torch::cuda::is_available()) fail("--device {}: no CUDA device is available on this machine", name);
  const int count = static_cast<int>(torch::cuda::device_count());
  if (index >= count) fail("--device {}: this machine has {} CUDA device{}", name, count, count == 1 ? "" : "s");
  if (index < 0) index = env.local_rank % count;
  return at::Device(at::kCUDA, static_cast<at::DeviceIndex>(index));
}

void set_up_cuda_runtime(const at::Device& device) {
  if (!device.is_cuda()) return;
  // The rank's device becomes the current one before anything allocates on CUDA: otherwise every rank's first
  // context, cuBLAS handle and NCCL communicator setup land on device 0.
  c10::cuda::set_device(device.index());
  // Attention dropout must be the configured probability: some cuDNN versions' SDPA kernels round it to a
  // multiple of 1/16 (0.1 becomes 0.0625 or 0.125). Without cuDNN, the padded path's SDPA takes the
  // memory-efficient kernel, which drops with the exact probability (0.0997 measured at p = 0.1 on an H200). The
  // unpadded path's flash varlen kernel keeps an element when a random byte is at most floor(255 (1 - p)), so it
  // drops 1 - 230/256 = 0.1016 at p = 0.1 (0.1013 +- 0.0003 measured) and scales survivors by 1 / (1 - p):
  // attention outputs are 0.17% smaller in expectation. torch_unit's cuda cases measure both.
  at::globalContext().setSDPUseCuDNN(false);
  set_sync_debug_mode();
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

}  // namespace bk

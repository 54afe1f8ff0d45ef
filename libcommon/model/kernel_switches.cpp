#include "model/kernel_switches.h"

#include <atomic>

namespace bk {

namespace {
std::atomic<bool> fused_on{false}, experimental_on{false};
}  // namespace

bool fused_kernels_built() {
#ifdef BERTKIT_CUDA_KERNELS
  return true;
#else
  return false;
#endif
}

void set_fused_kernels(bool on) { fused_on = on && fused_kernels_built(); }

bool fused_kernels_enabled() { return fused_on; }

void set_experimental_kernels(bool on) { experimental_on = on && fused_kernels_built(); }

bool experimental_kernels_enabled() { return fused_on && experimental_on; }

}  // namespace bk

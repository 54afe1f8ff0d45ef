#include "device/precision.h"

#include "util/error.h"
#include "util/tool_name.h"

#include <fmt/format.h>

#include <ATen/autocast_mode.h>
#include <ATen/cpu/Utils.h>
#include <ATen/cuda/CUDAContext.h>

#include <cctype>
#include <cstdlib>

namespace bk {

namespace {

// The ONEDNN_MAX_CPU_ISA values (oneDNN's dnnl_cpu_isa_t names) that leave bf16's instructions to oneDNN, and
// those that leave AMX's. Unset, DEFAULT or ALL: no cap.
bool isa_cap_allows(const std::string& cap, bool amx) {
  static const char* const kBf16[] = {"AVX512_CORE_BF16", "AVX10_1_512", "AVX512_CORE_FP16", "AVX10_2_512"};
  static const char* const kAmx[] = {"AVX10_1_512_AMX", "AVX512_CORE_AMX", "AVX10_1_512_AMX_FP16",
                                     "AVX512_CORE_AMX_FP16", "AVX10_2_512_AMX_2"};
  if (cap.empty() || cap == "DEFAULT" || cap == "ALL") return true;
  for (const char* name : kAmx)
    if (cap == name) return true;
  if (amx) return false;
  for (const char* name : kBf16)
    if (cap == name) return true;
  return false;
}

std::string isa_cap() {
  const char* value = std::getenv("ONEDNN_MAX_CPU_ISA");
  std::string cap = value ? value : "";
  for (char& c : cap) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return cap;
}

bool cpu_has(const char* capability) {
  const auto all = at::cpu::get_cpu_capabilities();
  const auto it = all.find(capability);
  return it != all.end() && it->second.isBool() && it->second.toBool();
}

}  // namespace

std::string cpu_native_bf16() {
  const std::string cap = isa_cap();
  if (cpu_has("amx_bf16") && isa_cap_allows(cap, true)) return "AMX-BF16";
  if (cpu_has("avx512_bf16") && isa_cap_allows(cap, false)) return "AVX512-BF16";
  return "";
}

ChosenPrecision choose_precision(std::optional<Precision> asked, const at::Device& device, bool warn) {
  if (asked == Precision::fp16 && !device.is_cuda())
    usage_fail("--precision fp16 needs --device cuda (use bf16 on the CPU)");
  if (device.is_cuda()) {
    const auto* props = at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index());
    const std::string cc = fmt::format("compute capability {}.{}", props->major, props->minor);
    if (asked) return {*asked, "asked"};
    return props->major >= 8 ? ChosenPrecision{Precision::bf16, "auto: the GPU's " + cc}
                             : ChosenPrecision{Precision::fp32, "auto: no bf16 at the GPU's " + cc};
  }
  const std::string native = cpu_native_bf16();
  const std::string cap = isa_cap();
  const bool capped = cpu_has("amx_bf16") || cpu_has("avx512_bf16");  // when there is none to use
  const std::string none = capped ? "ONEDNN_MAX_CPU_ISA=" + cap + " leaves the CPU's bf16 out"
                                  : std::string("no native bf16 on the CPU (AMX-BF16 or AVX512-BF16)");
  if (asked) {
    if (*asked == Precision::bf16 && native.empty() && warn)
      print_warning(fmt::format("--precision bf16: {}: bf16 is emulated, slower than fp32 (--precision auto runs "
                                "fp32 here)", none));
    return {*asked, "asked"};
  }
  if (!native.empty()) return {Precision::bf16, "auto: the CPU's " + native};
  return {Precision::fp32, "auto: " + none};
}

at::ScalarType compute_dtype(Precision precision) {
  return precision == Precision::bf16 ? at::kBFloat16 : precision == Precision::fp16 ? at::kHalf : at::kFloat;
}

AutocastScope::AutocastScope(Precision precision, const at::Device& device) : device_type_(device.type()) {
  if (precision == Precision::fp32) return;
  active_ = true;
  was_enabled_ = at::autocast::is_autocast_enabled(device_type_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
  at::autocast::set_autocast_enabled(device_type_, true);
  at::autocast::set_autocast_dtype(device_type_, compute_dtype(precision));
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

}  // namespace bk

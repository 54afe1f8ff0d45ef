// The precision a run computes in (--precision), by name (torch-free; device/precision.h has its autocast).
#pragma once

#include "util/choices.h"

#include <optional>
#include <string>

namespace bk {

enum class Precision { fp32, bf16, fp16 };
inline constexpr Choice<Precision> kPrecisions[] = {
    {"fp32", Precision::fp32}, {"bf16", Precision::bf16}, {"fp16", Precision::fp16}};

// --precision's values: auto (no value: the device's best, as device/precision.h's choose_precision decides) or a
// precision, obeyed.
inline constexpr Choice<std::optional<Precision>> kPrecisionFlags[] = {
    {"auto", std::nullopt}, {"fp32", Precision::fp32}, {"bf16", Precision::bf16}, {"fp16", Precision::fp16}};
// The precision a tool runs in, and why (for its start banner and its summary).
struct ChosenPrecision {
  Precision precision = Precision::fp32;
  std::string reason = "asked";  // or auto's ground: "auto: the CPU's AMX-BF16", "auto: no native bf16 on the CPU"
  std::string text() const { return std::string(choice_name(kPrecisions, precision)) + " (" + reason + ")"; }
};

inline constexpr const char* kPrecisionHelp =
    "auto: bf16 where the device multiplies in bf16 natively (a GPU of compute capability 8.0 or later, a CPU with "
    "AMX-BF16 or AVX512-BF16), else fp32; or fp32, bf16 (autocast), fp16 (CUDA)";

}  // namespace bk

// The precision a run computes in (--precision), by name (torch-free; device/precision.h has its autocast).
#pragma once

#include "util/choices.h"

namespace bk {

enum class Precision { fp32, bf16, fp16 };
inline constexpr Choice<Precision> kPrecisions[] = {
    {"fp32", Precision::fp32}, {"bf16", Precision::bf16}, {"fp16", Precision::fp16}};

}  // namespace bk

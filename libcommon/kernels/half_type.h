// The 16-bit storage types bertkit's CUDA kernels take (they compute in fp32).
#pragma once

namespace bk::kernels {

enum class HalfType { bf16, fp16 };

}  // namespace bk::kernels

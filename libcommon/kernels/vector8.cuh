// What bertkit's kernels share: 8 contiguous 16-bit values per thread, moved as one 16-byte word and computed in
// fp32, and how a backward kernel splits its rows into blocks whose partial sums the caller adds up.
#pragma once

#include "kernels/half_type.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace bk::kernels {

constexpr int kPerThread = 8;

__device__ inline float2 to_float2(__nv_bfloat162 v) { return __bfloat1622float2(v); }
__device__ inline float2 to_float2(__half2 v) { return __half22float2(v); }
template <typename T2> __device__ inline T2 from_float2(float a, float b);
template <> __device__ inline __nv_bfloat162 from_float2<__nv_bfloat162>(float a, float b) {
  return __floats2bfloat162_rn(a, b);
}
template <> __device__ inline __half2 from_float2<__half2>(float a, float b) { return __floats2half2_rn(a, b); }

// 8 values of the 16-bit type T2 holds pairs of, as one 16-byte word.
template <typename T2>
union Pack {
  uint4 word;
  T2 pairs[4];
};

template <typename T2>
__device__ inline void load8(const void* base, int64_t index, float (&v)[kPerThread]) {
  Pack<T2> p;
  p.word = *reinterpret_cast<const uint4*>(static_cast<const char*>(base) + index * 2);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = to_float2(p.pairs[k]);
    v[2 * k] = f.x;
    v[2 * k + 1] = f.y;
  }
}

template <typename T2>
__device__ inline void store8(void* base, int64_t index, const float (&v)[kPerThread]) {
  Pack<T2> p;
#pragma unroll
  for (int k = 0; k < 4; ++k) p.pairs[k] = from_float2<T2>(v[2 * k], v[2 * k + 1]);
  *reinterpret_cast<uint4*>(static_cast<char*>(base) + index * 2) = p.word;
}

// Whether a row of `cols` values fits one block of the row kernels: 8 per thread, at most 1,024 threads.
inline bool row_fits_block(int64_t cols) { return cols > 0 && cols % kPerThread == 0 && cols <= 1024 * kPerThread; }

// Threads for a row of `cols` values, 8 each, rounded up to whole warps.
inline int threads_for(int64_t cols) { return static_cast<int>((cols / kPerThread + 31) / 32 * 32); }

inline int multiprocessors() {
  constexpr int kDevices = 64;
  static std::atomic<int> count[kDevices];  // per device, asked once (racing askers store the same value)
  int device = 0;
  cudaGetDevice(&device);
  if (device < 0 || device >= kDevices) device = 0;
  int known = count[device].load(std::memory_order_relaxed);
  if (known == 0) {
    cudaDeviceGetAttribute(&known, cudaDevAttrMultiProcessorCount, device);
    if (known <= 0) known = 108;
    count[device].store(known, std::memory_order_relaxed);
  }
  return known;
}

inline int64_t rows_per_backward_block(int64_t rows) {
  const int sms = multiprocessors();
  // About 8 blocks per SM: enough to hide latency, few enough that the partial sums stay small.
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(rows, static_cast<int64_t>(sms) * 8));
  return (rows + blocks - 1) / blocks;
}

// The blocks (rows of the partial sums) a backward kernel launches for `rows` rows on the current device.
inline int64_t backward_blocks(int64_t rows) {
  if (rows == 0) return 0;
  const int64_t per_block = rows_per_backward_block(rows);
  return (rows + per_block - 1) / per_block;
}

// The last launch's error text, or an empty string.
inline const char* last_error() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : cudaGetErrorString(e);
}

// Launcher::run<T2>(args, stream) for the 16-bit type `type` names (T2 its pair type): the one place where a
// kernel's storage type picks its template instance. Launcher::run is overloaded on the kernel's argument structs.
template <typename Launcher, typename Args>
const char* launch_as(HalfType type, const Args& args, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return type == HalfType::bf16 ? Launcher::template run<__nv_bfloat162>(args, s)
                                : Launcher::template run<__half2>(args, s);
}

}  // namespace bk::kernels

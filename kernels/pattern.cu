#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "kernels/pattern.cuh"

namespace commscale::kernels {
namespace {

template <class T>
__device__ double to_double(T v) {
  return static_cast<double>(v);
}
template <>
__device__ double to_double<__half>(__half v) {
  return __half2float(v);
}
template <>
__device__ double to_double<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <class T>
__device__ T from_double(double v) {
  return static_cast<T>(v);
}
template <>
__device__ __half from_double<__half>(double v) {
  return __float2half_rn(static_cast<float>(v));
}
template <>
__device__ __nv_bfloat16 from_double<__nv_bfloat16>(double v) {
  return __float2bfloat16_rn(static_cast<float>(v));
}

template <class T>
__global__ void fill_pattern(T* data, std::uint64_t count, PatternSpec s) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    data[i] = from_double<T>(pattern_input(s, s.rank, i));
  }
}

template <class T>
__global__ void count_wrong(const T* data, std::uint64_t count, PatternSpec s, unsigned long long* wrong) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (std::uint64_t j = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; j < count; j += stride) {
    double expected = 0.0;
    if (pattern_expected(s, j, &expected) && !pattern_matches(s, to_double(data[j]), expected)) ++mine;
  }
  for (int offset = 16; offset > 0; offset /= 2) mine += __shfl_down_sync(0xFFFFFFFFu, mine, offset);
  if ((threadIdx.x & 31) == 0 && mine != 0) atomicAdd(wrong, mine);
}

constexpr int kThreads = 256;

unsigned int blocks_for(std::uint64_t count) {
  const std::uint64_t needed = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(std::clamp<std::uint64_t>(needed, 1, 65535));
}

// Calls f(T{}) with T the device type of `type`.
template <class F>
void with_device_type(DataType type, F&& f) {
  switch (type) {
    case DataType::kInt8: f(std::int8_t{}); break;
    case DataType::kInt32: f(std::int32_t{}); break;
    case DataType::kFloat16: f(__half{}); break;
    case DataType::kBFloat16: f(__nv_bfloat16{}); break;
    case DataType::kFloat32: f(float{}); break;
    case DataType::kFloat64: f(double{}); break;
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      f(std::uint8_t{});
      break;  // no collective carries FP8 (dtype.hpp): bytes
  }
}

}  // namespace

void launch_fill_pattern(void* data, std::uint64_t count, const PatternSpec& s, cudaStream_t stream) {
  if (count == 0) return;
  with_device_type(s.type, [&](auto tag) {
    using T = decltype(tag);
    fill_pattern<T><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<T*>(data), count, s);
  });
}

void launch_count_wrong(const void* data, std::uint64_t count, const PatternSpec& s, unsigned long long* wrong,
                        cudaStream_t stream) {
  if (count == 0) return;
  with_device_type(s.type, [&](auto tag) {
    using T = decltype(tag);
    count_wrong<T><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const T*>(data), count, s, wrong);
  });
}

}  // namespace commscale::kernels

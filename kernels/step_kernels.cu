#include <cuda_bf16.h>

#include <algorithm>

#include "kernels/step_kernels.cuh"

namespace commscale::kernels {
namespace {

constexpr int kThreads = 256;

unsigned int blocks_for(std::uint64_t vectors) {
  return static_cast<unsigned int>(std::clamp<std::uint64_t>((vectors + kThreads - 1) / kThreads, 1, 132 * 16));
}

__device__ float transform(MemoryKernelKind kind, float x) {
  switch (kind) {
    // GELU in its sigmoid form, with the hardware's approximate exp and reciprocal as fused kernels compile
    // it (an IEEE-rounded reciprocal is a dozen instructions, and made this kernel compute-bound).
    case MemoryKernelKind::kActivation: return __fdividef(x, 1.0f + __expf(-1.702f * x));
    // Each keeps its values' spread, as the real kernel's outputs have it: a GEMM's time depends on the
    // bits it multiplies (results/h200x1-2026-12-03b), and a transform that drew every value to one
    // fixed point (0.5 x + 0.25 did) left later GEMMs multiplying nearly constant data.
    case MemoryKernelKind::kSoftmax: return __expf(fminf(x, 0.0f));  // probabilities, in (0, 1]
    case MemoryKernelKind::kNorm: return x * rsqrtf(fabsf(x) + 0.25f);
    case MemoryKernelKind::kDropout: return x > -0.9f ? x * 1.111f : 0.0f;
    case MemoryKernelKind::kOptimizer: return fmaf(-1e-4f, x, x);
    default: return -x;
  }
}

// Each thread handles 16-byte vectors (eight bf16 values): it loads in[i mod n_in] and stores out[i].
// Every loaded word also goes into a checksum that decides a (practically never taken) store, so the
// compiler cannot skip the loads a kernel that reads more than it writes must make. The arithmetic is
// done on the values written, once per output element, as a real kernel does it (SwiGLU's silu runs on
// the gate, not the up projection; GELU's backward on the input, not the gradient).
__global__ void memory_kernel(MemoryKernelKind kind, const uint4* in, std::uint64_t n_in, uint4* out,
                              std::uint64_t n_out, std::uint32_t never) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t n = n_in > n_out ? n_in : n_out;
  std::uint32_t checksum = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    uint4 v = n_in > 0 ? in[i < n_in ? i : i % n_in] : make_uint4(0x3C003C00u, 0x3C003C00u, 0x3C003C00u, 0x3C003C00u);
    checksum ^= v.x ^ v.y ^ v.z ^ v.w;
    if (i >= n_out) continue;
    auto* h = reinterpret_cast<__nv_bfloat162*>(&v);
    for (int j = 0; j < 4; ++j) {
      const float2 f = __bfloat1622float2(h[j]);
      h[j] = __floats2bfloat162_rn(transform(kind, f.x), transform(kind, f.y));
    }
    out[i] = v;
  }
  if (checksum == never && n_out > 0) out[0].x = checksum;
}

__global__ void fill_random(uint4* data, std::uint64_t n, std::uint32_t seed, std::uint32_t mask) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    uint4 v;
    std::uint32_t* w = &v.x;
    for (int j = 0; j < 4; ++j) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      // Two 16-bit halves with exponent bits 0x3C..0x3F and a random sign: values between about -2 and
      // -0.01 or 0.01 and 2 in bf16 and fp16 (fp32: the same bit patterns, the same range), as a model's
      // weights and activations have both signs (a tensor core multiplying positive values only, as the
      // first fill did, ran 4-6% faster than on normal values: results/h200x1-2026-12-03b).
      w[j] = (x & mask) | 0x3C003C00u;
    }
    data[i] = v;
  }
}

}  // namespace

void launch_memory_kernel(MemoryKernelKind kind, const void* in, std::uint64_t bytes_read, void* out,
                          std::uint64_t bytes_written, cudaStream_t stream) {
  const std::uint64_t n_in = (bytes_read + 15) / 16;
  const std::uint64_t n_out = (bytes_written + 15) / 16;
  if (n_out == 0 && n_in == 0) return;
  memory_kernel<<<blocks_for(std::max(n_in, n_out)), kThreads, 0, stream>>>(
      kind, static_cast<const uint4*>(in), n_in, static_cast<uint4*>(out), n_out, 0x9E3779B9u);
}

void launch_fill_random(void* data, std::uint64_t bytes, std::uint32_t seed, cudaStream_t stream, bool fp8_safe) {
  const std::uint64_t n = bytes / 16;
  if (n == 0) return;
  const std::uint32_t mask = fp8_safe ? 0x83BF83BFu : 0x83FF83FFu;
  fill_random<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<uint4*>(data), n, seed, mask);
}

}  // namespace commscale::kernels

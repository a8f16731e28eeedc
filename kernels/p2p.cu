#include <algorithm>

#include "kernels/device_timer.cuh"
#include "kernels/p2p.cuh"
#include "kernels/vector_copy.cuh"

namespace commscale::kernels {
namespace {

__global__ void spin(const volatile int* release, volatile int* timed_out, std::uint64_t timeout_ns) {
  const std::uint64_t start = global_timer_ns();
  while (*release == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      *timed_out = 1;
      __threadfence_system();
      return;
    }
  }
}

constexpr unsigned int kCopyThreads = 512;

__global__ void sm_copy(uint4* __restrict__ dst, const uint4* __restrict__ src, std::uint64_t vectors,
                        unsigned char* __restrict__ dst_tail, const unsigned char* __restrict__ src_tail,
                        unsigned int tail) {
  const std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  copy_vectors(dst, src, vectors, t, static_cast<std::uint64_t>(gridDim.x) * blockDim.x);
  if (t < tail) dst_tail[t] = src_tail[t];
}

__global__ void pointer_chase(const unsigned long long* nodes, unsigned long long start, std::uint32_t accesses,
                              unsigned long long* end) {
  unsigned long long at = start;
  for (std::uint32_t n = 0; n < accesses; ++n) at = __ldcv(nodes + at);
  *end = at;
}

}  // namespace

void launch_spin(const volatile int* release, volatile int* timed_out, std::uint64_t timeout_ns, cudaStream_t stream) {
  spin<<<1, 1, 0, stream>>>(release, timed_out, timeout_ns);
}

void launch_sm_copy(void* dst, const void* src, std::uint64_t bytes, unsigned int blocks, cudaStream_t stream) {
  if (bytes == 0) return;
  const std::uint64_t vectors = bytes / sizeof(uint4);
  const auto tail = static_cast<unsigned int>(bytes % sizeof(uint4));
  auto* dst_tail = static_cast<unsigned char*>(dst) + vectors * sizeof(uint4);
  const auto* src_tail = static_cast<const unsigned char*>(src) + vectors * sizeof(uint4);
  const unsigned int grid = std::max(blocks, 1u);
  sm_copy<<<grid, kCopyThreads, 0, stream>>>(static_cast<uint4*>(dst), static_cast<const uint4*>(src), vectors,
                                             dst_tail, src_tail, tail);
}

void launch_pointer_chase(const std::uint64_t* nodes, std::uint64_t start, std::uint32_t accesses, std::uint64_t* end,
                          cudaStream_t stream) {
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
  pointer_chase<<<1, 1, 0, stream>>>(reinterpret_cast<const unsigned long long*>(nodes), start, accesses,
                                     reinterpret_cast<unsigned long long*>(end));
}

}  // namespace commscale::kernels

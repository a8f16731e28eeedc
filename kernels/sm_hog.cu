#include "kernels/sm_hog.cuh"
#include "kernels/device_timer.cuh"

namespace commscale::kernels {
namespace {

__global__ void sm_hog(const volatile int* release, volatile int* started, std::uint64_t timeout_ns) {
  extern __shared__ unsigned char held[];  // never read: its size is the point
  // A slot per block, not an atomic counter: atomics on host memory need PCIe AtomicOps.
  started[blockIdx.x] = 1;
  __threadfence_system();
  const std::uint64_t start = global_timer_ns();
  while (*release == 0 && global_timer_ns() - start < timeout_ns) {
  }
  held[0] = 0;
}

}  // namespace

cudaError_t launch_sm_hog(unsigned int blocks, std::size_t shared_bytes, const volatile int* release,
                          volatile int* started, std::uint64_t timeout_ns, cudaStream_t stream) {
  const cudaError_t set =
      cudaFuncSetAttribute(sm_hog, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes));
  if (set != cudaSuccess) return set;
  sm_hog<<<blocks, 1, shared_bytes, stream>>>(release, started, timeout_ns);
  return cudaGetLastError();
}

}  // namespace commscale::kernels

#include <algorithm>

#include "kernels/device_timer.cuh"
#include "kernels/probe.cuh"
#include "kernels/vector_copy.cuh"

namespace commscale::kernels {
namespace {

constexpr int kProbeThreads = 1024;
constexpr std::uint64_t kChunkVectors = (1u << 20) / sizeof(uint4);  // a 1 MiB read per round

__device__ unsigned long long probe_bytes(const ProbeState* state, int blocks) {
  const volatile unsigned long long* bytes = state->bytes;
  unsigned long long sum = 0;
  for (int b = 0; b < blocks; ++b) sum += bytes[b];
  return sum;
}

__global__ void timed_spin(std::uint64_t ns) {
  const std::uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < ns) {
  }
}

__global__ void empty() {}

// Each block owns `region` vectors of the buffer: it copies the first half into the second, 1 MiB at a
// time, and after each round publishes its byte count and looks at the stop flag. The dynamic shared
// memory of the launch is never touched: it is there to hold the SM.
__global__ void __launch_bounds__(kProbeThreads, 1)
    probe(ProbeState* state, uint4* buffer, std::uint64_t region, bool stream_memory, std::uint64_t max_ns) {
  __shared__ int done;
  const std::uint64_t start = global_timer_ns();
  if (threadIdx.x == 0) {
    done = 0;
    atomicAdd(&state->started, 1u);
  }
  __syncthreads();
  const std::uint64_t half = region / 2;
  const std::uint64_t chunk = half < kChunkVectors ? half : kChunkVectors;
  const std::uint64_t chunks = chunk > 0 ? half / chunk : 1;
  const uint4* src = buffer + blockIdx.x * region;
  uint4* dst = buffer + blockIdx.x * region + half;
  unsigned long long moved = 0;
  for (std::uint64_t c = 0;; c = (c + 1) % chunks) {
    if (stream_memory && chunk > 0) {
      copy_vectors(dst + c * chunk, src + c * chunk, chunk, threadIdx.x, blockDim.x);
      moved += 2 * chunk * sizeof(uint4);
    } else {
      __nanosleep(1000);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      *static_cast<volatile unsigned long long*>(&state->bytes[blockIdx.x]) = moved;
      const bool stop = *static_cast<volatile unsigned int*>(&state->stop) != 0;
      const bool late = global_timer_ns() - start > max_ns;
      if (late && !stop) atomicExch(&state->expired, 1u);
      done = stop || late ? 1 : 0;
    }
    __syncthreads();
    if (done != 0) return;
  }
}

__global__ void probe_begin(ProbeState* state, int blocks, std::uint64_t max_wait_ns) {
  const std::uint64_t start = global_timer_ns();
  while (*static_cast<volatile unsigned int*>(&state->started) < static_cast<unsigned int>(blocks)) {
    if (global_timer_ns() - start > max_wait_ns) {
      state->timed_out = 1;
      break;
    }
  }
  state->begin_ns = global_timer_ns();
  state->begin_bytes = probe_bytes(state, blocks);
}

__global__ void probe_end(ProbeState* state, int blocks) {
  state->end_ns = global_timer_ns();
  state->end_bytes = probe_bytes(state, blocks);
  __threadfence();
  atomicExch(&state->stop, 1u);
}

}  // namespace

void launch_timed_spin(std::uint64_t ns, cudaStream_t stream) { timed_spin<<<1, 1, 0, stream>>>(ns); }

void launch_empty(cudaStream_t stream) { empty<<<1, 1, 0, stream>>>(); }

cudaError_t prepare_probe(int* shared_bytes) {
  int device = 0;
  int per_sm = 0;
  int per_block = 0;
  cudaError_t rc = cudaGetDevice(&device);
  if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (rc != cudaSuccess) return rc;
  // Over half of the SM's, in 1 KiB steps; the driver keeps 1 KiB per block to itself.
  *shared_bytes = std::min(per_block, (per_sm / 2 / 1024 + 1) * 1024);
  return cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, *shared_bytes);
}

void launch_probe(ProbeState* state, int blocks, void* buffer, std::uint64_t buffer_bytes, bool stream_memory,
                  std::uint64_t max_ns, int shared_bytes, cudaStream_t stream) {
  if (blocks < 1 || blocks > kMaxProbeBlocks) return;
  const std::uint64_t region = buffer_bytes / sizeof(uint4) / static_cast<std::uint64_t>(blocks);
  probe<<<blocks, kProbeThreads, static_cast<std::size_t>(shared_bytes), stream>>>(
      state, static_cast<uint4*>(buffer), region, stream_memory, max_ns);
}

void launch_probe_begin(ProbeState* state, int blocks, std::uint64_t max_wait_ns, cudaStream_t stream) {
  probe_begin<<<1, 1, 0, stream>>>(state, blocks, max_wait_ns);
}

void launch_probe_end(ProbeState* state, int blocks, cudaStream_t stream) {
  probe_end<<<1, 1, 0, stream>>>(state, blocks);
}

}  // namespace commscale::kernels

#pragma once

// Testing only (`commscale doctor --inject-sm-hog`): blocks that each take a whole SM's shared
// memory and spin, so that no other kernel's block fits on those SMs until they end, as a second
// process on the GPU would hold them.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace commscale::kernels {

// Launches `blocks` blocks of one thread with `shared_bytes` of dynamic shared memory each; block b
// sets started[b] to 1 (mapped host memory), then spins until *release is non-zero or timeout_ns have
// passed. Returns the launch error (cudaSuccess when queued).
[[nodiscard]] cudaError_t launch_sm_hog(unsigned int blocks, std::size_t shared_bytes, const volatile int* release,
                                        volatile int* started, std::uint64_t timeout_ns, cudaStream_t stream);

}  // namespace commscale::kernels

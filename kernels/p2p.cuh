#pragma once

// Kernels of `commscale p2p` (src/bench/P2P.md): the spin kernel that holds a stream until a batch of
// copies is queued, the SM copy that reads a peer's (or the host's) memory, and the pointer chase
// that times dependent loads from it.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace commscale::kernels {

// Spins until *release (mapped pinned host memory) is non-zero, or until timeout_ns have passed, in
// which case it sets *timed_out to 1: a host that never releases cannot hang the GPU.
void launch_spin(const volatile int* release, volatile int* timed_out, std::uint64_t timeout_ns, cudaStream_t stream);

// Copies `bytes` from src to dst (either may be a peer's memory or mapped host memory) with `blocks`
// blocks: 16-byte loads and stores, four in flight per thread. Both pointers 16-byte aligned.
void launch_sm_copy(void* dst, const void* src, std::uint64_t bytes, unsigned int blocks, cudaStream_t stream);

// One thread follows `accesses` links of the chain in `nodes` (each node holds the word index of the
// next) from word `start`, one uncached 8-byte load per link, and writes the word it ends at to *end.
void launch_pointer_chase(const std::uint64_t* nodes, std::uint64_t start, std::uint32_t accesses, std::uint64_t* end,
                          cudaStream_t stream);

}  // namespace commscale::kernels

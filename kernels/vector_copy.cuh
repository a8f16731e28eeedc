#pragma once

// The copy loop of the SM copies (p2p's and the interference probe's): 16-byte vectors, each thread
// issuing several loads before its stores, so that many reads are in flight (remote and HBM reads
// both need that to reach full bandwidth).

#include <cstdint>

namespace commscale::kernels {

inline constexpr int kCopyInFlight = 4;

// Copies vectors first, first + stride, ... below `vectors` from src to dst.
__device__ inline void copy_vectors(uint4* __restrict__ dst, const uint4* __restrict__ src, std::uint64_t vectors,
                                    std::uint64_t first, std::uint64_t stride) {
  std::uint64_t i = first;
  for (; i + (kCopyInFlight - 1) * stride < vectors; i += kCopyInFlight * stride) {
    uint4 v[kCopyInFlight];
#pragma unroll
    for (int k = 0; k < kCopyInFlight; ++k) v[k] = src[i + k * stride];
#pragma unroll
    for (int k = 0; k < kCopyInFlight; ++k) dst[i + k * stride] = v[k];
  }
  for (; i < vectors; i += stride) dst[i] = src[i];
}

}  // namespace commscale::kernels

#pragma once

// The memory-bound kernels of a training step (norms, activations, softmax, dropout, residuals,
// embedding, cross entropy, the optimizer update). Each reads `bytes_read` and writes
// `bytes_written`, as the workload model counts them, in 16-byte vectors, with the arithmetic of its
// kind; the exact reduction structure of the real kernels (a norm's row statistics, say) is not
// reproduced: these ops are timed by the bytes they move.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "program/op.hpp"

namespace commscale::kernels {

void launch_memory_kernel(MemoryKernelKind kind, const void* in, std::uint64_t bytes_read, void* out,
                          std::uint64_t bytes_written, cudaStream_t stream);

// Fills `bytes` of device memory with small, normal bf16/fp16/fp32 values (not zeros: kernels can be
// faster on zeros than on the data a step sees).
// `fp8_safe`: every byte also a finite FP8 value of either format (E4M3, E5M2), |x| < 2, for FP8 GEMMs' operands:
// bit 6 of each 16-bit half's low byte cleared (the top bit of an FP8 byte's exponent), one random mantissa
// bit fewer for bf16 and fp16. Off, the fill is what it was.
void launch_fill_random(void* data, std::uint64_t bytes, std::uint32_t seed, cudaStream_t stream,
                        bool fp8_safe = false);

}  // namespace commscale::kernels

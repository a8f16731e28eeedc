#pragma once

// GPU fill and check of the verification pattern (src/core/pattern.hpp): the same definitions the
// CPU backend uses, run over device memory so multi-GiB buffers are checked without copying them.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/pattern.hpp"

namespace commscale::kernels {

// Writes input elements [0, count) of rank s.rank.
void launch_fill_pattern(void* data, std::uint64_t count, const PatternSpec& s, cudaStream_t stream);

// Adds the number of wrong output elements in [0, count) to *wrong (device memory).
void launch_count_wrong(const void* data, std::uint64_t count, const PatternSpec& s, unsigned long long* wrong,
                        cudaStream_t stream);

}  // namespace commscale::kernels

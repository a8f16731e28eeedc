#pragma once

// The GPU's global nanosecond timer, for kernels that must give up after a while on their own (a
// host that never releases them cannot hang the GPU).

#include <cstdint>

namespace commscale::kernels {

__device__ inline std::uint64_t global_timer_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace commscale::kernels

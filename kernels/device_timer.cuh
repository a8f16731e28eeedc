#pragma once

// The GPU's global timer (nanoseconds, the same on every SM), for kernels that spin for a time or
// stamp when something happened.

#include <cstdint>

namespace commscale::kernels {

__device__ inline std::uint64_t global_timer_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace commscale::kernels

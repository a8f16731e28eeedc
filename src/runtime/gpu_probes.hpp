#pragma once

// Single-GPU measurements for `commscale calibrate`: a GEMM or a memory-bound kernel alone, run with
// the same library call, algorithm and kernel the training step uses (cuBLASLt; kernels/step_kernels),
// on operands rotated through a pool so no call finds them in L2.

#include <memory>
#include <string>

#include "core/units.hpp"
#include "program/op.hpp"

namespace commscale {

// Calls issued back to back and waited for a bounded time (GpuProbes::gemm_within).
struct CallWindow {
  int issued = 0;
  int finished = 0;      // by the end of the wait, in issue order
  Seconds span{0.0};     // the finished calls, first start to last end (CUDA events)
  Seconds median{0.0};   // of one finished call
  Seconds waited{0.0};   // wall clock from the first issue to the end of the wait
  [[nodiscard]] bool all_finished() const noexcept { return finished == issued; }
};

// A GEMM timed in a loop with the step's memory-bound kernel (GpuProbes::gemm_among_memory).
struct Alternation {
  Seconds gemm{0.0};       // median of one GEMM call over the loop's second half
  double gemm_share = 1.0;  // the GEMMs' share of that half's time, as it came out
};

class GpuProbes {
 public:
  virtual ~GpuProbes() = default;
  // Median seconds of one call of `g` over `repetitions` back-to-back calls.
  [[nodiscard]] virtual Seconds gemm(const Gemm& g, int repetitions) = 0;
  // `repetitions` calls of `g` back to back, waited for at most `limit`: a GEMM that cannot start (its
  // SMs taken by another kernel) shows as calls not finished, not as a long wait. Calls left unfinished
  // stay queued on the probes' stream.
  [[nodiscard]] virtual CallWindow gemm_within(const Gemm& g, int repetitions, Seconds limit) = 0;
  // Median seconds of the step's memory-bound kernel reading `bytes / 2` and writing `bytes / 2`.
  [[nodiscard]] virtual Seconds memory(Bytes bytes, int repetitions) = 0;
  // `g` called in a loop that alternates it with the step's memory-bound kernel, sized so that the GEMM
  // takes about `gemm_share` of the time (1: GEMM after GEMM), for about `duration`: under the board's
  // power limit the clock settles where the loop's power allows, and the second half is timed.
  [[nodiscard]] virtual Alternation gemm_among_memory(const Gemm& g, double gemm_share, Seconds duration) = 0;
  // Keeps the GPU busy with a large GEMM for at least `at_least`, so that what is timed next runs at
  // the clocks a sustained load (a training step) settles at, not at an idle GPU's boost clock.
  virtual void heat(Seconds at_least) = 0;
  // What the GEMM of this type runs as ("bf16 x bf16 -> bf16, fp32 accumulate").
  [[nodiscard]] virtual std::string describe(const Gemm& g) const = 0;
};

// Probes on the current CUDA device with a pool of `pool` bytes (operands of the largest call must
// fit). `tf32`: fp32 GEMMs on TF32 tensor cores. Throws RuntimeFailure in a build without the GPU
// backend.
[[nodiscard]] std::unique_ptr<GpuProbes> make_gpu_probes(Bytes pool, bool tf32);

}  // namespace commscale

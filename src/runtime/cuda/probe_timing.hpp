#pragma once

// Timing one kind of call alone on a GPU, the way `train --gemm-check` and `calibrate` do it.

#include <cstdint>
#include <functional>
#include <string>

#include <cuda_runtime.h>

#include "core/units.hpp"
#include "program/op.hpp"
#include "runtime/cuda/cublaslt_gemm.hpp"
#include "runtime/cuda/handles.hpp"
#include "runtime/gpu_probes.hpp"

namespace commscale {

// A batch of calls queued on `stream` behind a timed spin, so that the GPU runs them back to back
// once the host has queued them all. Each run() starts with a spin of the current length; where the
// GPU finished the spin before the host had queued the batch, the spin is doubled and the batch must be
// run again. Throws RuntimeFailure "`what`: `batch` outlasted a 2 s spin" once the spin would pass 2 s
// (the batch's times would be the host's).
class QueuedBehindSpin {
 public:
  static constexpr double kFirstSpinPerCallNs = 50e3;  // the first spin, per call of a batch
  QueuedBehindSpin(cudaStream_t stream, int calls, std::string what, std::string batch);
  // Spins, runs `queue` (which issues the batch on the stream), waits for the stream. True where the
  // spin outlasted the queueing: the batch ran back to back. False: run it again (the spin is doubled).
  [[nodiscard]] bool run(const std::function<void()>& queue);

 private:
  cudaStream_t stream_;
  double spin_ns_;
  std::string what_;
  std::string batch_;
  CudaEvent spun_;
};

// The median time of `call(i)` on `stream`, `repetitions` times after 3 warm-up calls, with a CUDA
// event between calls: the GPU's time for a call. The calls are queued behind a timed spin that
// outlasts their issue (in batches of at most 128, each behind a spin, doubled and the batch run again
// where the GPU reached the calls before the host had queued them), so the GPU runs them back to back,
// as in a step whose host is ahead. Issued from an idle GPU instead, a call shorter than its launch is
// timed at the host's launch rate: calibrate's fastest GEMM rows were 6-11 us on H200 machines whose
// host takes 6-7.5 us to issue one cuBLASLt call (results/h200x1-2026-12-03e). The host's own time is
// the host model's (calibrate --measure host, program/host_costs.hpp). Throws RuntimeFailure where a
// batch's issue outlasts a 2 s spin (its times would be the host's).
[[nodiscard]] Seconds median_call_time(const std::function<void(int)>& call, cudaStream_t stream, int repetitions);

// The median time of the GEMM alone, each call on the next set of operands in the `pool_bytes` at
// `pool` (as the step's ops rotate through its pool), so no call finds its operands in L2 from the last.
// Outputs go to a part of the pool no call reads: the operands stay what the pool held.
[[nodiscard]] Seconds median_gemm_time(CublasLtGemm& gemm, const Gemm& g, std::byte* pool, std::uint64_t pool_bytes,
                                       cudaStream_t stream, int repetitions);

// `call(i)` for each operand set of `g` in the pool, as median_gemm_time rotates them.
[[nodiscard]] std::function<void(int)> rotating_gemm_call(CublasLtGemm& gemm, const Gemm& g, std::byte* pool,
                                                          std::uint64_t pool_bytes, cudaStream_t stream);

// `repetitions` calls issued back to back on `stream` (no warm-up), waited for at most `limit` of wall
// clock: what finished by then, and how long the finished calls took by CUDA events (CallWindow).
[[nodiscard]] CallWindow calls_within(const std::function<void(int)>& call, cudaStream_t stream, int repetitions,
                                      Seconds limit);

}  // namespace commscale

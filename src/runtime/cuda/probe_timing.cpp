#include "runtime/cuda/probe_timing.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "kernels/probe.cuh"
#include "runtime/cuda/checks.hpp"
#include "runtime/cuda/handles.hpp"
#include "runtime/step_buffers.hpp"

namespace commscale {

QueuedBehindSpin::QueuedBehindSpin(cudaStream_t stream, int calls, std::string what, std::string batch)
    : stream_(stream), spin_ns_(kFirstSpinPerCallNs * calls), what_(std::move(what)), batch_(std::move(batch)) {}

bool QueuedBehindSpin::run(const std::function<void()>& queue) {
  constexpr double kMaxSpinNs = 2e9;
  kernels::launch_timed_spin(static_cast<std::uint64_t>(spin_ns_), stream_);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(spun_.get(), stream_));
  queue();
  const cudaError_t state = cudaEventQuery(spun_.get());
  if (state != cudaSuccess && state != cudaErrorNotReady) CUDA_CHECK(state);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (state != cudaSuccess) return true;
  spin_ns_ *= 2;  // the GPU ran dry before the calls were queued: a longer spin
  if (spin_ns_ > kMaxSpinNs) throw RuntimeFailure(fmt::format("{}: {} outlasted a 2 s spin", what_, batch_));
  return false;
}

Seconds median_call_time(const std::function<void(int)>& call, cudaStream_t stream, int repetitions) {
  constexpr int kWarmup = 3;
  // Calls per batch: a batch's calls and events (two entries a call) stay well inside the GPU's queue
  // of pending launches, which would otherwise block the host and let the GPU run dry.
  constexpr int kBatch = 128;
  for (int i = 0; i < kWarmup; ++i) call(i);
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(repetitions));
  std::vector<CudaEvent> marks(static_cast<std::size_t>(std::min(repetitions, kBatch)) + 1);
  // Timed as they came, the calls would be the host's time, not the GPU's: no row rather than that.
  QueuedBehindSpin spin(stream, static_cast<int>(marks.size()), "timing a call", "a batch of calls");
  int done = 0;
  while (done < repetitions) {
    const int calls = std::min(repetitions - done, kBatch);
    const bool queued = spin.run([&] {
      CUDA_CHECK(cudaEventRecord(marks[0].get(), stream));
      for (int i = 0; i < calls; ++i) {
        call(kWarmup + done + i);
        CUDA_CHECK(cudaEventRecord(marks[static_cast<std::size_t>(i) + 1].get(), stream));
      }
    });
    if (!queued) continue;
    for (int i = 0; i < calls; ++i) {
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, marks[static_cast<std::size_t>(i)].get(),
                                      marks[static_cast<std::size_t>(i) + 1].get()));
      times.push_back(ms * 1e-3);
    }
    done += calls;
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
  return Seconds(times[times.size() / 2]);
}

std::function<void(int)> rotating_gemm_call(CublasLtGemm& gemm, const Gemm& g, std::byte* pool,
                                            std::uint64_t pool_bytes, cudaStream_t stream) {
  const GemmOperandLayout layout = gemm_operand_layout(g);
  if (layout.bytes > pool_bytes) {
    throw RuntimeFailure(fmt::format("a {} x {} x {} x {} GEMM needs {:.2f} GiB of operands; the probe pool has {:.2f} GiB",
                                     g.m, g.n, g.k, g.batch, Bytes(layout.bytes).gib(), Bytes(pool_bytes).gib()));
  }
  // The pool holds `sets` operand sets: every set's A and B first, then every set's C. No call writes
  // where any call reads, so what every call multiplies is the pool's fill, whatever shapes ran before
  // in the same pool (a tensor core's speed depends on the bits it multiplies). With outputs written
  // over later shapes' operands, sums of sums grew without bound: calibrate's large GEMMs ran at the
  // speed of NaN operands, 15% faster than on normal values (results/h200x1-2026-12-03c).
  const std::uint64_t inputs = layout.c_at;
  const std::uint64_t output = layout.bytes - layout.c_at;
  const std::uint64_t sets = pool_bytes / layout.bytes;
  std::byte* outputs = pool + sets * inputs;
  return [&gemm, g, pool, outputs, layout, inputs, output, sets, stream](int i) {
    const std::uint64_t set = static_cast<std::uint64_t>(i) % sets;
    std::byte* a = pool + set * inputs;
    gemm.run(g, a, a + layout.b_at, outputs + set * output, stream);
  };
}

Seconds median_gemm_time(CublasLtGemm& gemm, const Gemm& g, std::byte* pool, std::uint64_t pool_bytes,
                         cudaStream_t stream, int repetitions) {
  return median_call_time(rotating_gemm_call(gemm, g, pool, pool_bytes, stream), stream, repetitions);
}

CallWindow calls_within(const std::function<void(int)>& call, cudaStream_t stream, int repetitions, Seconds limit) {
  using Clock = std::chrono::steady_clock;
  std::vector<CudaEvent> marks(static_cast<std::size_t>(repetitions) + 1);
  const Clock::time_point began = Clock::now();
  CUDA_CHECK(cudaEventRecord(marks[0].get(), stream));
  for (int i = 0; i < repetitions; ++i) {
    call(i);
    CUDA_CHECK(cudaEventRecord(marks[static_cast<std::size_t>(i) + 1].get(), stream));
  }
  const Clock::time_point deadline = began + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(limit.value()));
  CallWindow w;
  w.issued = repetitions;
  // Calls end in order on one stream: count the finished ones until all have, or the time is up.
  while (w.finished < repetitions) {
    const cudaError_t state = cudaEventQuery(marks[static_cast<std::size_t>(w.finished) + 1].get());
    if (state == cudaSuccess) {
      ++w.finished;
      continue;
    }
    if (state != cudaErrorNotReady) CUDA_CHECK(state);
    if (Clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  w.waited = Seconds(std::chrono::duration<double>(Clock::now() - began).count());
  std::vector<double> times;
  for (int i = 0; i < w.finished; ++i) {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, marks[static_cast<std::size_t>(i)].get(),
                                    marks[static_cast<std::size_t>(i) + 1].get()));
    times.push_back(ms * 1e-3);
    w.span = Seconds(w.span.value() + ms * 1e-3);
  }
  if (!times.empty()) w.median = Seconds(summarize(times).median);
  return w;
}

}  // namespace commscale

// `calibrate --measure host`: the executor's host time per op class on its own launch path
// (runtime/calibration_probes.hpp has the method).

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "kernels/probe.cuh"
#include "kernels/step_kernels.cuh"
#include "runtime/calibration_probes.hpp"
#include "runtime/cuda/checks.hpp"
#include "runtime/cuda/cublaslt_gemm.hpp"
#include "runtime/cuda/cuda_queue.hpp"
#include "runtime/cuda/device_memory.hpp"
#include "runtime/cuda/handles.hpp"
#include "runtime/cuda/nccl_communicator.hpp"
#include "runtime/cuda/probe_timing.hpp"

namespace commscale {
namespace {

using Clock = std::chrono::steady_clock;

// Median host microseconds per call of `call(i)`: batches of `calls` calls queued behind a timed spin
// on `stream`, each batch checked to have ended while the spin still ran.
double host_us_per_call(const std::function<void(int)>& call, cudaStream_t stream, const HostIssueOptions& o,
                        const std::function<void()>& before_batch = {}) {
  QueuedBehindSpin spin(stream, o.calls, "calibrate --measure host", "a batch of calls");
  std::vector<double> samples;
  while (static_cast<int>(samples.size()) < o.samples) {
    double seconds = 0.0;
    const bool queued = spin.run([&] {
      if (before_batch) before_batch();
      const auto start = Clock::now();
      for (int i = 0; i < o.calls; ++i) call(i);
      seconds = std::chrono::duration<double>(Clock::now() - start).count();
    });
    if (queued) samples.push_back(seconds / o.calls * 1e6);
  }
  return summarize(samples).median;
}

// The period of back-to-back empty kernels on one stream (GPU time, CUDA events).
double kernel_floor_us(cudaStream_t stream, const HostIssueOptions& o) {
  CudaEvent first;
  CudaEvent last;
  QueuedBehindSpin spin(stream, o.calls, "calibrate --measure host", "empty kernels");
  std::vector<double> samples;
  while (static_cast<int>(samples.size()) < o.samples) {
    const bool queued = spin.run([&] {
      CUDA_CHECK(cudaEventRecord(first.get(), stream));
      for (int i = 0; i < o.calls; ++i) kernels::launch_empty(stream);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaEventRecord(last.get(), stream));
    });
    if (!queued) continue;
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, first.get(), last.get()));
    samples.push_back(ms * 1e3 / o.calls);
  }
  return summarize(samples).median;
}

// A communicator of this rank alone, initialised as the step engine's are (non-blocking).
std::unique_ptr<NcclComm> one_rank_comm(Seconds timeout) {
  ncclUniqueId id{};
  NCCL_CHECK(ncclGetUniqueId(&id));
  ncclComm_t comm = nullptr;
  ncclConfig_t config = nonblocking_config();
  NCCL_CHECK(ncclCommInitRankConfig(&comm, 1, id, 0, &config));
  auto out = std::make_unique<NcclComm>(comm);
  out->wait_ready(timeout, "the initialisation of a one-rank NCCL communicator");
  return out;
}

struct Operands {
  std::byte* a = nullptr;
  std::byte* b = nullptr;
  std::byte* c = nullptr;
  std::byte* memory = nullptr;  // the memory kernel's and NCCL's buffers
};

}  // namespace

HostIssueTimes measure_host_issue(const HostIssueOptions& o) {
  const Seconds timeout(o.timeout_s);
  HostIssueTimes t;
  t.calls = o.calls;
  t.samples = o.samples;
  CudaStream stream;
  CudaStream other;
  constexpr std::uint64_t kSmallBytes = 64 * 1024;
  const Gemm g = make_gemm(512, 512, 512, 1, DataType::kBFloat16);
  const std::uint64_t operand = 512ull * 512 * 2;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const DeviceMemory pool(device, Bytes(3 * operand + 2 * kSmallBytes), "the host probes' operands");
  const Operands at{pool.data(), pool.data() + operand, pool.data() + 2 * operand, pool.data() + 3 * operand};
  CUDA_CHECK(cudaMemsetAsync(pool.data(), 0, pool.size().count(), stream.get()));

  CublasLtGemm gemm(false);
  gemm.run(g, at.a, at.b, at.c, stream.get());  // the plan is made once per shape, before the step
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  t.gemm_us = host_us_per_call([&](int) { gemm.run(g, at.a, at.b, at.c, stream.get()); }, stream.get(), o);
  t.kernel_us = host_us_per_call(
      [&](int) {
        kernels::launch_memory_kernel(MemoryKernelKind::kResidual, at.memory, kSmallBytes, at.memory + kSmallBytes,
                                      kSmallBytes, stream.get());
        CUDA_CHECK(cudaGetLastError());
      },
      stream.get(), o);

  std::vector<CudaEvent> events(static_cast<std::size_t>(o.calls));
  t.event_record_us = host_us_per_call(
      [&](int i) { CUDA_CHECK(cudaEventRecord(events[static_cast<std::size_t>(i)].get(), stream.get())); }, stream.get(), o);
  // Each wait is on an event of another stream that is still busy, as a step's cross-stream waits are.
  t.stream_wait_us = host_us_per_call(
      [&](int i) { CUDA_CHECK(cudaStreamWaitEvent(stream.get(), events[static_cast<std::size_t>(i)].get(), 0)); },
      stream.get(), o, [&] {
        kernels::launch_timed_spin(static_cast<std::uint64_t>(QueuedBehindSpin::kFirstSpinPerCallNs * o.calls),
                                  other.get());
        for (CudaEvent& e : events) CUDA_CHECK(cudaEventRecord(e.get(), other.get()));
      });
  CUDA_CHECK(cudaStreamSynchronize(other.get()));

  int version = 0;
  NCCL_CHECK(ncclGetVersion(&version));
  const std::uint64_t count = 4096;  // 8 KiB of bf16: latency-bound, as a step's small collectives
  {
    const std::unique_ptr<NcclComm> comm = one_rank_comm(timeout);
    const CollectiveCall call{Collective::kAllReduce, at.memory, at.memory, count, DataType::kBFloat16,
                              ReduceOp::kSum,         0,         {},        {}};
    t.collective_us = host_us_per_call(
        [&](int) {
          launch_nccl_collective(call, comm->get(), stream.get(), 0, 1, version);
          comm->wait_ready(timeout, "an all-reduce on a one-rank NCCL communicator");
        },
        stream.get(), o);
  }
  // The step's sends and receives are separate calls on two-rank communicators. One rank can only
  // send to itself inside a group that also receives, so the pair is timed and halved.
  try {
    const std::unique_ptr<NcclComm> comm = one_rank_comm(timeout);
    const double pair_us = host_us_per_call(
        [&](int) {
          NCCL_CHECK(ncclGroupStart());
          NCCL_CHECK(ncclSend(at.memory, count, ncclBfloat16, 0, comm->get(), stream.get()));
          NCCL_CHECK(ncclRecv(at.memory + kSmallBytes, count, ncclBfloat16, 0, comm->get(), stream.get()));
          NCCL_CHECK(ncclGroupEnd());
          comm->wait_ready(timeout, "a send and a receive to itself on a one-rank NCCL communicator");
        },
        stream.get(), o);
    t.p2p_us = pair_us / 2;
    t.p2p_measured = true;
    t.p2p_note = fmt::format("p2p: half of a group of one ncclSend and one ncclRecv to itself ({:.2f} us the pair)",
                             pair_us);
  } catch (const std::exception& e) {
    (void)cudaGetLastError();
    t.p2p_us = t.collective_us;
    t.p2p_note = fmt::format("p2p: taken as the collective's cost (a send to itself on one rank failed: {})", e.what());
  }
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  t.kernel_floor_us = kernel_floor_us(stream.get(), o);
  return t;
}

}  // namespace commscale

// `calibrate --measure interference`: the interference probe (kernels/probe.cuh) beside a GEMM loop
// and beside a loop of the step's memory kernel (runtime/calibration_probes.hpp).

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "kernels/probe.cuh"
#include "kernels/step_kernels.cuh"
#include "runtime/calibration_probes.hpp"
#include "runtime/cuda/checks.hpp"
#include "runtime/cuda/cublaslt_gemm.hpp"
#include "runtime/cuda/device_memory.hpp"
#include "runtime/cuda/handles.hpp"
#include "runtime/cuda/probe_timing.hpp"

namespace commscale {
namespace {

constexpr std::uint64_t kProbeBufferBytes = 1ull << 30;  // 20x an H200's L2: the probe streams HBM
constexpr std::uint64_t kMemoryKernelHalf = 512ull << 20;  // the memory kernel reads 512 MiB, writes 512 MiB
constexpr std::int64_t kGemmDim = 8192;
constexpr std::uint64_t kProbeMaxNs = 2'000'000'000ull;  // a probe never outlives 2 s (the loops take ~20-50 ms)
constexpr std::uint64_t kBeginWaitNs = 1'000'000'000ull;

struct Sample {
  double compute_ms = 0;
  double probe_GBps = 0;
  bool outlasted = false;  // the compute ended only after the probe gave up (2 s): no overlap to measure
};

class InterferenceRig {
 public:
  explicit InterferenceRig(const InterferenceOptions& o)
      : o_(o),
        device_(current_device()),
        probe_buffer_(device_, Bytes(kProbeBufferBytes), "the interference probe's buffer"),
        memory_buffer_(device_, Bytes(2 * kMemoryKernelHalf), "the memory kernel's operands"),
        gemm_buffer_(device_, Bytes(3ull * kGemmDim * kGemmDim * 2), "the GEMM's operands"),
        state_(device_, Bytes(sizeof(kernels::ProbeState)), "the probe's state"),
        gemm_(false),
        big_(make_gemm(kGemmDim, kGemmDim, kGemmDim, 1, DataType::kBFloat16)) {
    CUDA_CHECK(kernels::prepare_probe(&shared_bytes_));
    for (const DeviceMemory* m : {&probe_buffer_, &memory_buffer_, &gemm_buffer_}) {
      kernels::launch_fill_random(m->data(), m->size().count(), 11u, compute_.get());
    }
    CUDA_CHECK(cudaGetLastError());
    const double gemm_ms = median_call_time([&](int) { run_gemm(); }, compute_.get(), 5).value() * 1e3;
    const double memory_ms = median_call_time([&](int) { run_memory(); }, compute_.get(), 5).value() * 1e3;
    gemm_calls_ = std::clamp(static_cast<int>(std::ceil(o.compute_ms / gemm_ms)), 2, 1000);
    memory_calls_ = std::clamp(static_cast<int>(std::ceil(o.compute_ms / memory_ms)), 2, 1000);
    heat_calls_ = std::clamp(static_cast<int>(std::ceil(o.heat_ms / gemm_ms)), 0, 1000);
  }

  // The probe with `blocks` blocks (0: none) beside the GEMM loop, the memory loop or (neither) a
  // one-thread spin of `spin_ms`.
  Sample run(int blocks, bool streams_memory, int beside, double spin_ms) {
    auto* state = reinterpret_cast<kernels::ProbeState*>(state_.data());
    // The streams do not synchronise with the legacy default stream: clear the state on the probe's.
    CUDA_CHECK(cudaMemsetAsync(state, 0, sizeof(kernels::ProbeState), probe_.get()));
    CUDA_CHECK(cudaStreamSynchronize(probe_.get()));
    if (blocks > 0) {
      kernels::launch_probe(state, blocks, probe_buffer_.data(), kProbeBufferBytes, streams_memory, kProbeMaxNs,
                            shared_bytes_, probe_.get());
      CUDA_CHECK(cudaGetLastError());
    }
    kernels::launch_probe_begin(state, blocks, kBeginWaitNs, compute_.get());
    CUDA_CHECK(cudaEventRecord(begin_.get(), compute_.get()));
    if (beside == kBesideGemm) {
      for (int i = 0; i < gemm_calls_; ++i) run_gemm();
    } else if (beside == kBesideMemory) {
      for (int i = 0; i < memory_calls_; ++i) run_memory();
    } else {
      kernels::launch_timed_spin(static_cast<std::uint64_t>(spin_ms * 1e6), compute_.get());
    }
    CUDA_CHECK(cudaEventRecord(end_.get(), compute_.get()));
    kernels::launch_probe_end(state, blocks, compute_.get());
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(compute_.get()));
    CUDA_CHECK(cudaStreamSynchronize(probe_.get()));
    kernels::ProbeState s{};
    CUDA_CHECK(cudaMemcpy(&s, state, sizeof(s), cudaMemcpyDeviceToHost));
    if (s.timed_out != 0) {
      throw RuntimeFailure(fmt::format(
          "the interference probe of {} blocks did not overlap the compute: its blocks did not all start within 1 s",
          blocks));
    }
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, begin_.get(), end_.get()));
    Sample out;
    out.outlasted = s.expired != 0;
    out.compute_ms = ms;
    if (s.end_ns > s.begin_ns) {
      out.probe_GBps = static_cast<double>(s.end_bytes - s.begin_bytes) / static_cast<double>(s.end_ns - s.begin_ns);
    }
    return out;
  }

  void heat() {
    for (int i = 0; i < heat_calls_; ++i) run_gemm();
  }

  [[nodiscard]] std::string method() const {
    return fmt::format(
        "probe: k blocks of 1024 threads holding {} KiB of shared memory each (one per SM, no GEMM tile beside it), "
        "copying a {} GiB buffer (read half, write half) or sleeping; beside it on another stream {} bf16 {}^3 "
        "cuBLASLt GEMMs or {} step memory kernels of {} MiB moved, back to back (~{:.0f} ms alone); a one-thread "
        "marker on the compute stream waits until every probe block runs before the loop and stops the probe "
        "after it, so the overlap is the whole loop; compute time by CUDA events, the probe's rate by its byte "
        "counters over the markers' global timer; medians of {} alone/together pairs, each after {:.0f} ms of GEMMs",
        shared_bytes_ / 1024, kProbeBufferBytes >> 30, gemm_calls_, kGemmDim, memory_calls_,
        2 * kMemoryKernelHalf >> 20, o_.compute_ms, o_.repetitions, o_.heat_ms);
  }

  static constexpr int kBesideGemm = 0;
  static constexpr int kBesideMemory = 1;
  static constexpr int kBesideNothing = 2;

 private:
  static int current_device() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    return device;
  }
  void run_gemm() {
    std::byte* base = gemm_buffer_.data();
    const std::uint64_t operand = static_cast<std::uint64_t>(kGemmDim) * kGemmDim * 2;
    gemm_.run(big_, base, base + operand, base + 2 * operand, compute_.get());
  }
  void run_memory() {
    std::byte* in = memory_buffer_.data();
    kernels::launch_memory_kernel(MemoryKernelKind::kResidual, in, kMemoryKernelHalf, in + kMemoryKernelHalf,
                                  kMemoryKernelHalf, compute_.get());
  }

  InterferenceOptions o_;
  int device_ = 0;
  DeviceMemory probe_buffer_;
  DeviceMemory memory_buffer_;
  DeviceMemory gemm_buffer_;
  DeviceMemory state_;
  CudaStream compute_;
  CudaStream probe_;
  CudaEvent begin_;
  CudaEvent end_;
  CublasLtGemm gemm_;
  Gemm big_;
  int shared_bytes_ = 0;
  int gemm_calls_ = 0;
  int memory_calls_ = 0;
  int heat_calls_ = 0;
};

double median_of(const std::vector<double>& v) { return summarize(v).median; }

}  // namespace

InterferenceResult measure_interference(const InterferenceOptions& o) {
  InterferenceRig rig(o);
  InterferenceResult result;
  result.method = rig.method();
  for (int sms : o.sms) {
    if (sms < 1 || sms > kernels::kMaxProbeBlocks) {
      throw InputError("--interference-sms", fmt::format("{}", sms), fmt::format("1 to {}", kernels::kMaxProbeBlocks));
    }
    // The probe's rate alone, over a spin as long as the compute loop.
    std::vector<double> alone_rate;
    for (int r = 0; r < o.repetitions; ++r) {
      alone_rate.push_back(rig.run(sms, true, InterferenceRig::kBesideNothing, o.compute_ms).probe_GBps);
    }
    for (const int beside : {InterferenceRig::kBesideGemm, InterferenceRig::kBesideMemory}) {
      for (const bool streams : {true, false}) {
        std::vector<double> alone_ms;
        std::vector<double> together_ms;
        std::vector<double> together_rate;
        bool outlasted = false;
        for (int r = 0; r < o.repetitions && !outlasted; ++r) {
          rig.heat();
          alone_ms.push_back(rig.run(0, false, beside, 0).compute_ms);
          const Sample s = rig.run(sms, streams, beside, 0);
          outlasted = s.outlasted;
          together_ms.push_back(s.compute_ms);
          together_rate.push_back(s.probe_GBps);
        }
        const char* what = beside == InterferenceRig::kBesideGemm ? "GEMM" : "memory kernel";
        if (outlasted) {
          result.not_measured.push_back(fmt::format(
              "{} SMs {} beside the {}: the {} loop ({:.1f} ms alone) ended only after the probe gave up at 2 s "
              "(its kernel waits for every SM, as a persistent GEMM sized to the GPU does)",
              sms, streams ? "streaming" : "held", what, what, median_of(alone_ms)));
          continue;
        }
        InterferenceMeasurement m;
        m.sms = sms;
        m.streams_memory = streams;
        m.beside_gemm = beside == InterferenceRig::kBesideGemm;
        m.probe_alone_GBps = streams ? median_of(alone_rate) : 0.0;
        m.probe_together_GBps = streams ? median_of(together_rate) : 0.0;
        m.compute_alone_ms = median_of(alone_ms);
        m.compute_together_ms = median_of(together_ms);
        result.rows.push_back(m);
      }
    }
  }
  return result;
}

}  // namespace commscale

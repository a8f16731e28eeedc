#include "bench/calibrate_rows.hpp"

#include <array>

#include <fmt/format.h>

namespace commscale {
namespace {

// The range a profile accepts for a slowdown (predict/calibration_sections.cpp).
constexpr double kLowestSlowdown = 0.9;
constexpr double kHighestSlowdown = 100.0;

}  // namespace

HostCosts commscale_host_costs(const HostIssueTimes& t, double barrier_us, const std::string& measured_by) {
  HostCosts h;
  h.framework = "commscale";
  const double end_event = t.event_record_us;
  const double communication_extra = t.event_record_us + t.stream_wait_us;
  // No attention figure: the executor issues each flash product as its own GEMM call (kPerProduct below).
  const std::array<std::pair<HostOpClass, double>, 4> per_class = {
      {{HostOpClass::kGemm, t.gemm_us + end_event},
       {HostOpClass::kKernel, t.kernel_us + end_event},
       {HostOpClass::kCollective, t.collective_us + communication_extra},
       {HostOpClass::kP2p, t.p2p_us + communication_extra}}};
  for (auto& phase : h.issue) {
    for (const auto& [c, us] : per_class) phase[static_cast<std::size_t>(c)] = microseconds(us);
  }
  h.step = microseconds(barrier_us + kStepEventRecords * t.event_record_us + kStepStreamWaits * t.stream_wait_us);
  h.sync = HostSync::kNone;
  h.attention = AttentionIssue::kPerProduct;  // the executor runs each flash product as its own GEMM call
  h.source = fmt::format(
      "{}: host time per call on the executor's launch path, {} calls queued behind a spin kernel (GPU never idle), "
      "steady clock, median of {} batches; per op with train --timing op: gemm = cuBLASLt bf16 512^3 call {:.2f} us "
      "+ end event {:.2f}; kernel = memory-kernel launch and error check {:.2f} + end event; collective = NCCL "
      "all-reduce 8 KiB on a one-rank communicator with the wait for its enqueue {:.2f} (NCCL's one-rank path: a "
      "lower bound of a multi-rank call's) + end event + one cross-stream wait {:.2f}; {} {:.2f} + end event + "
      "wait; step = MPI barrier over the job {:.2f} + {} event records + {} cross-stream waits",
      measured_by, t.calls, t.samples, t.gemm_us, t.event_record_us, t.kernel_us, t.collective_us, t.stream_wait_us,
      t.p2p_note, t.p2p_us, barrier_us, kStepEventRecords, kStepStreamWaits);
  return h;
}

predict::DeviceFigures device_figures(const HostIssueTimes& t, const std::string& measured_by) {
  predict::DeviceFigures d;
  d.kernel_floor = microseconds(t.kernel_floor_us);
  d.source = fmt::format("{}: kernel_floor_us is the period of {} back-to-back empty kernels (one thread) on one "
                         "stream, queued behind a spin kernel, CUDA events, median of {} batches",
                         measured_by, t.calls, t.samples);
  return d;
}

std::vector<predict::InterferencePoint> interference_points(const InterferenceResult& r, const std::string& measured_by,
                                                            std::vector<std::string>* skipped) {
  std::vector<predict::InterferencePoint> points;
  for (const InterferenceMeasurement& m : r.rows) {
    predict::InterferencePoint p;
    p.sms = m.sms;
    p.probe_GBps = m.streams_memory ? m.probe_alone_GBps : 0.0;
    p.beside = m.beside_gemm ? predict::Beside::kGemm : predict::Beside::kMemory;
    p.compute_slowdown = m.compute_alone_ms > 0 ? m.compute_together_ms / m.compute_alone_ms : 0.0;
    p.probe_slowdown =
        !m.streams_memory ? 1.0 : (m.probe_together_GBps > 0 ? m.probe_alone_GBps / m.probe_together_GBps : 0.0);
    const std::string what = fmt::format("{} SMs {} beside {}", m.sms, m.streams_memory ? "streaming" : "held",
                                         predict::name(p.beside));
    const auto refused = [](double v) { return !(v >= kLowestSlowdown && v <= kHighestSlowdown); };
    if (refused(p.compute_slowdown) || refused(p.probe_slowdown) || (m.streams_memory && p.probe_GBps <= 0)) {
      skipped->push_back(fmt::format("{}: compute {:.3f} -> {:.3f} ms, probe {:.1f} -> {:.1f} GB/s", what,
                                     m.compute_alone_ms, m.compute_together_ms, m.probe_alone_GBps,
                                     m.probe_together_GBps));
      continue;
    }
    p.source = fmt::format("{}; {}: compute {:.3f} ms alone, {:.3f} ms together; probe {:.1f} GB/s alone, {:.1f} "
                           "GB/s during the overlap",
                           measured_by, what, m.compute_alone_ms, m.compute_together_ms, m.probe_alone_GBps,
                           m.probe_together_GBps);
    points.push_back(p);
  }
  return points;
}

}  // namespace commscale

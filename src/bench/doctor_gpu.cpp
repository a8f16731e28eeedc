#include "bench/doctor_gpu.hpp"

#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "program/op.hpp"
#include "runtime/gpu_probes.hpp"
#include "runtime/sm_hog.hpp"

namespace commscale {
namespace {

constexpr std::int64_t kGemmDim = 8192;  // calibrate's heater, and the shape the catalog figure is checked at
constexpr Bytes kGemmPool(2ull << 30);   // operands rotate through it (3 x 128 MiB per call)
constexpr auto kSampleEvery = std::chrono::milliseconds(25);
// The timed GEMMs take well under a second on any GPU the catalog has (30 calls of 8192^3: ~50 ms on
// an H100, ~0.5 s on a T4); calls not finished by then count as not done.
constexpr Seconds kGemmWaitAtMost(5.0);

// Samples NVML from a thread of its own while the GPU works.
class LoadSampler {
 public:
  explicit LoadSampler(const NvmlHealth* nvml) {
    if (nvml == nullptr) return;
    thread_ = std::thread([this, nvml] {
      while (!stop_.load()) {
        samples_.push_back(nvml->sample());
        std::this_thread::sleep_for(kSampleEvery);
      }
    });
  }
  ~LoadSampler() { stop(); }
  LoadSampler(const LoadSampler&) = delete;
  LoadSampler& operator=(const LoadSampler&) = delete;
  const std::vector<GpuLoadSample>& stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return samples_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<GpuLoadSample> samples_;
  std::thread thread_;
};

void summarize_load(const std::vector<GpuLoadSample>& samples, GpuMeasurement& m) {
  std::vector<double> clocks;
  std::vector<double> power;
  for (const GpuLoadSample& s : samples) {
    if (s.sm_clock_MHz) clocks.push_back(*s.sm_clock_MHz);
    if (s.power_W) power.push_back(*s.power_W);
    if (s.clock_reasons) m.clock_reasons = m.clock_reasons.value_or(0) | *s.clock_reasons;
    if (s.temperature_C) m.temperature_C = std::max(m.temperature_C.value_or(0), *s.temperature_C);
    if (s.pcie_current.known() &&
        (s.pcie_current.generation > m.pcie_loaded.generation || s.pcie_current.width > m.pcie_loaded.width)) {
      m.pcie_loaded = {std::max(s.pcie_current.generation, m.pcie_loaded.generation),
                       std::max(s.pcie_current.width, m.pcie_loaded.width)};
    }
  }
  if (!clocks.empty()) m.sm_clock_MHz = static_cast<int>(summarize(clocks).median);
  if (!power.empty()) m.power_W = summarize(power).median;
  m.samples = static_cast<int>(samples.size());
}

DataType gemm_type(int compute_capability) {
  return compute_capability >= 80 ? DataType::kBFloat16 : DataType::kFloat16;
}

}  // namespace

std::string describe_rank(const RankPlacement& p) {
  if (p.device < 0) return fmt::format("{} rank {}", p.host, p.rank);
  return fmt::format("{} rank {} GPU {} [{}]", p.host, p.rank, p.device, p.pci_bus_id);
}

predict::CheckPlace place_of(const RankPlacement& p) {
  predict::CheckPlace place;
  place.host = p.host;
  place.rank = p.rank;
  place.gpu = p.device;
  place.pci_bus_id = p.pci_bus_id;
  return place;
}

GpuDoctor::GpuDoctor(const DoctorOptions& options, const RankPlacement& placement)
    : options_(options), placement_(placement) {
  nvml_ = NvmlHealth::open(placement.pci_bus_id, &nvml_status_);
}

GpuDoctor::~GpuDoctor() = default;

void GpuDoctor::run_gemm(GpuMeasurement& m, int world_rank) {
  m.gemm_type = gemm_type(placement_.compute_capability);
  const Gemm g = make_gemm(kGemmDim, kGemmDim, kGemmDim, 1, m.gemm_type);
  const std::unique_ptr<GpuProbes> probes = make_gpu_probes(kGemmPool, false);
  LoadSampler sampler(nvml_.get());
  probes->heat(Seconds(options_.gemm_seconds));
  (void)probes->gemm(g, 1);  // the algorithm chosen and its first call paid before anything is timed
  // Declared after the probes, so released first: the calls it kept from starting then finish before
  // the probes' memory is freed.
  std::unique_ptr<SmHog> hog;
  if (options_.sm_hog && options_.sm_hog->rank == world_rank) hog = hold_sms(options_.sm_hog->fraction);
  const std::string held =
      hog ? fmt::format("; --inject-sm-hog held {} of {} SMs", hog->sms_held(), hog->sms_total()) : "";
  if (hog) m.hog_sms = hog->sms_held();
  const CallWindow w = probes->gemm_within(g, options_.gemm_reps, kGemmWaitAtMost);
  hog.reset();
  summarize_load(sampler.stop(), m);
  // The rate the calls sustained back to back; calls that had not finished by the deadline (a GEMM
  // whose blocks wait for SMs another kernel holds: cuBLASLt's persistent kernels do) count as work
  // not done in the time waited, as a training step would see it.
  const Seconds took = w.all_finished() ? w.span : w.waited;
  m.gemm_TFLOPS = took.value() > 0 ? g.flops.value() * w.finished / took.value() / 1e12 : 0.0;
  const std::string calls =
      w.all_finished()
          ? fmt::format("{} calls back to back in {:.1f} ms (median call {:.2f} ms)", w.issued, w.span.value() * 1e3,
                        w.median.value() * 1e3)
          : fmt::format("{} of {} calls back to back finished within {:.1f} s", w.finished, w.issued, w.waited.value());
  m.gemm_what = fmt::format("{} {} x {} x {}, {}, {} after {:.1f} s of GEMMs{}", name(m.gemm_type), kGemmDim, kGemmDim,
                            kGemmDim, probes->describe(g), calls, options_.gemm_seconds, held);
}

GpuMeasurement GpuDoctor::measure(int world_rank) {
  GpuMeasurement m;
  m.placement = placement_;
  m.nvml_status = nvml_ ? "" : nvml_status_;
  if (nvml_) {
    m.pcie_max = nvml_->facts().pcie_max;
    for (const NvlinkInfo& l : nvml_->facts().nvlinks) {
      ++m.nvlinks_present;
      if (l.active) ++m.nvlinks_active;
    }
    m.sm_clock_max_MHz = nvml_->max_sm_clock_MHz();
    m.power_limit_W = nvml_->power_limit_W();
    m.errors = nvml_->errors();
  }
  try {
    run_gemm(m, world_rank);
  } catch (const RuntimeFailure& e) {  // a GEMM that cannot run is a finding, not the end of the run
    m.gemm_status = e.what();
  }
  return m;
}

std::optional<std::vector<std::uint64_t>> GpuDoctor::xids() { return nvml_ ? nvml_->xid_events() : std::nullopt; }

}  // namespace commscale

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
  std::unique_ptr<SmHog> hog;
  if (options_.sm_hog && options_.sm_hog->rank == world_rank) hog = hold_sms(options_.sm_hog->fraction);
  if (hog) m.hog_sms = hog->sms_held();
  LoadSampler sampler(nvml_.get());
  probes->heat(Seconds(options_.gemm_seconds));
  const Seconds t = probes->gemm(g, options_.gemm_reps);
  summarize_load(sampler.stop(), m);
  m.gemm_TFLOPS = g.flops.value() / t.value() / 1e12;
  m.gemm_what =
      fmt::format("{} {} x {} x {}, {}, median of {} after {:.1f} s of the same GEMM{}", name(m.gemm_type), kGemmDim,
                  kGemmDim, kGemmDim, probes->describe(g), options_.gemm_reps, options_.gemm_seconds,
                  hog ? fmt::format("; --inject-sm-hog held {} of {} SMs", hog->sms_held(), hog->sms_total()) : "");
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

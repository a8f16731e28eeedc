#pragma once

// A GPU's health as NVML reports it, for `commscale doctor`: clocks and the reasons they are held
// down, ECC error counts, retired pages and remapped rows, XID events while doctor runs, and the
// PCIe link as it runs under load. Every query is optional: one this NVML or GPU does not support
// leaves its fact unknown (nullopt), and the check says it could not run.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/machine.hpp"
#include "runtime/nvml_library.hpp"

namespace commscale {

// nvmlClocksEventReasons (nvmlClocksThrottleReasons before CUDA 12.2): the bits NVML sets while
// something holds the clocks below their maximum.
enum ClockEventReason : std::uint64_t {
  kClockIdle = 0x1,
  kClockApplicationsSetting = 0x2,
  kClockSwPowerCap = 0x4,
  kClockHwSlowdown = 0x8,
  kClockSyncBoost = 0x10,
  kClockSwThermal = 0x20,
  kClockHwThermal = 0x40,
  kClockHwPowerBrake = 0x80,
  kClockDisplaySetting = 0x100,
};
// "sw power cap, hw thermal slowdown" for the bits set; "none" for 0.
[[nodiscard]] std::string describe_clock_reasons(std::uint64_t reasons);

// What a sampler thread reads while the GPU works.
struct GpuLoadSample {
  std::optional<int> sm_clock_MHz;
  std::optional<std::uint64_t> clock_reasons;
  std::optional<double> power_W;
  std::optional<int> temperature_C;
  std::optional<int> pstate;  // 0 = P0
  PcieLink pcie_current;
};

struct GpuErrorState {
  std::optional<bool> ecc_enabled;
  std::optional<std::uint64_t> ecc_uncorrected_volatile;  // since the driver loaded
  std::optional<std::uint64_t> ecc_corrected_volatile;
  std::optional<std::uint64_t> ecc_uncorrected_aggregate;  // over the GPU's life
  std::optional<int> retired_pages_single_bit;
  std::optional<int> retired_pages_double_bit;
  std::optional<bool> retirement_pending;  // a page waits for the next driver load
  std::optional<int> remapped_rows_correctable;
  std::optional<int> remapped_rows_uncorrectable;
  std::optional<bool> remap_pending;  // a row waits for the next GPU reset
  std::optional<bool> remap_failed;   // the GPU ran out of spare rows
};

class NvmlHealth {
 public:
  // nullptr (with the reason in *why) when NVML or the GPU at `pci_bus_id` is not there.
  [[nodiscard]] static std::unique_ptr<NvmlHealth> open(const std::string& pci_bus_id, std::string* why);
  ~NvmlHealth();
  NvmlHealth(const NvmlHealth&) = delete;
  NvmlHealth& operator=(const NvmlHealth&) = delete;

  [[nodiscard]] const NvmlGpuFacts& facts() const noexcept { return facts_; }  // links, as topo reads them
  [[nodiscard]] std::optional<int> max_sm_clock_MHz() const;
  [[nodiscard]] std::optional<double> power_limit_W() const;
  [[nodiscard]] GpuLoadSample sample() const;  // thread-safe: NVML is
  [[nodiscard]] GpuErrorState errors() const;
  // XID events (nvmlEventTypeXidCriticalError) since open(): their XID numbers. nullopt when NVML
  // cannot watch them on this GPU.
  [[nodiscard]] std::optional<std::vector<std::uint64_t>> xid_events();

 private:
  struct Api;
  NvmlHealth(std::unique_ptr<NvmlLibrary> nvml, void* device, std::unique_ptr<Api> api);
  std::unique_ptr<NvmlLibrary> nvml_;
  void* device_;
  std::unique_ptr<Api> api_;
  NvmlGpuFacts facts_;
  void* events_ = nullptr;  // nvmlEventSet_t, when XIDs are watched
};

}  // namespace commscale

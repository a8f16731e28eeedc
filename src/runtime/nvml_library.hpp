#pragma once

// NVML, loaded with dlopen so that commscale starts where the driver is absent, for what CUDA does not
// tell: NVLink links (state, far end, speed), the PCIe link's generation and width, and the PCIe
// path between two GPUs. Every entry point is optional: one that this NVML lacks, or that the GPU
// does not support, leaves its fact unknown.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/machine.hpp"

namespace commscale {

struct NvmlGpuFacts {
  bool found = false;  // NVML knows a GPU at this PCI bus id
  PcieLink pcie_max;
  PcieLink pcie_current;
  std::vector<NvlinkInfo> nvlinks;
  std::optional<double> nvlink_speed_MBps;
};

class NvmlLibrary {
 public:
  // Loads libnvidia-ml.so.1 and initialises it; nullptr, with the reason in *why, when it cannot.
  [[nodiscard]] static std::unique_ptr<NvmlLibrary> open(std::string* why);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  [[nodiscard]] std::string driver_version() const;
  [[nodiscard]] NvmlGpuFacts gpu(const std::string& pci_bus_id) const;
  // nvmlDeviceGetTopologyCommonAncestor, which `nvidia-smi topo -m` prints; kUnknown where unsupported.
  [[nodiscard]] PcieRelation common_ancestor(const std::string& bus_a, const std::string& bus_b) const;
  // nvmlDeviceGetP2PStatus for NVLink: whether the two GPUs can talk P2P over NVLink; nullopt where unsupported.
  [[nodiscard]] std::optional<bool> nvlink_p2p(const std::string& bus_a, const std::string& bus_b) const;
  // An entry point of this NVML by name, nullptr where it lacks it, and NVML's handle of the GPU at a
  // PCI bus id (nullptr where NVML does not know it): for the queries of runtime/nvml_health.cpp.
  [[nodiscard]] void* symbol(const char* name) const;
  [[nodiscard]] void* device_handle(const std::string& pci_bus_id) const;

 private:
  struct Api;  // the resolved entry points (nvml_library.cpp)
  NvmlLibrary(void* handle, std::unique_ptr<Api> api);
  void* handle_;
  std::unique_ptr<Api> api_;
};

}  // namespace commscale

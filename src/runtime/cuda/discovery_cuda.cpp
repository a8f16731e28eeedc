// Discovery of this machine's GPUs from one process: CUDA for the devices and peer access, NVML
// (when it loads) for NVLink and the PCIe links and paths, sysfs for the PCI tree and NUMA nodes and
// as the fallback for PCIe when NVML is missing.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/topo_matrix.hpp"
#include "runtime/cuda/checks.hpp"
#include "runtime/cuda/device_text.hpp"
#include "runtime/discovery.hpp"
#include "runtime/gpu.hpp"
#include "runtime/nvml_library.hpp"
#include "runtime/process.hpp"
#include "runtime/sysfs_pci.hpp"

namespace commscale {
namespace {

std::vector<int> chosen_devices(const std::vector<int>& asked, int count) {
  if (asked.empty()) {
    std::vector<int> all(static_cast<std::size_t>(count));
    for (int d = 0; d < count; ++d) all[static_cast<std::size_t>(d)] = d;
    return all;
  }
  for (std::size_t i = 0; i < asked.size(); ++i) {
    if (asked[i] < 0 || asked[i] >= count) {
      throw InputError(
          "--devices",
          fmt::format("device {} does not exist: {} GPU{} visible", asked[i], count, count == 1 ? " is" : "s are"),
          fmt::format("device numbers from 0 to {}", count - 1));
    }
    if (std::find(asked.begin(), asked.begin() + static_cast<std::ptrdiff_t>(i), asked[i]) !=
        asked.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw InputError("--devices", fmt::format("device {} is listed twice", asked[i]), "each device once");
    }
  }
  return asked;
}

DiscoveredGpu describe(int device, const NvmlLibrary* nvml) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::array<char, 32> bus{};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device));
  DiscoveredGpu g;
  g.device = device;
  g.name = prop.name;
  g.pci_bus_id = normalize_pci_bus_id(bus.data());
  g.uuid = gpu_uuid_text(prop.uuid);
  g.memory = Bytes(prop.totalGlobalMem);
  g.compute_capability = prop.major * 10 + prop.minor;
  g.sm_count = prop.multiProcessorCount;

  const SysfsPciFacts sys = read_sysfs_pci(g.pci_bus_id);
  g.pci_path = sys.path;
  g.numa_node = sys.numa_node;
  if (sys.max.known()) {
    g.pcie_max = sys.max;
    g.pcie_current = sys.current;
    g.pcie_source = "sysfs";
  }
  const NvmlGpuFacts facts = nvml != nullptr ? nvml->gpu(g.pci_bus_id) : NvmlGpuFacts{};
  if (facts.found && facts.pcie_max.known()) {  // NVML knows the link of a VM's passed-through GPU too
    g.pcie_max = facts.pcie_max;
    g.pcie_current = facts.pcie_current;
    g.pcie_source = "NVML";
  }
  g.nvlinks = facts.nvlinks;
  g.nvlink_speed_MBps = facts.nvlink_speed_MBps;
  return g;
}

PeerFacts peer(const DiscoveredGpu& a, const DiscoveredGpu& b, const NvmlLibrary* nvml) {
  PeerFacts p;
  int can = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a.device, b.device));
  p.can_access_peer = can != 0;
  int rank = -1;
  if (cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a.device, b.device) == cudaSuccess) {
    p.performance_rank = rank;
  } else {
    (void)cudaGetLastError();  // not every platform answers; the rank is informative only
  }
  if (nvml != nullptr) {
    p.relation = nvml->common_ancestor(a.pci_bus_id, b.pci_bus_id);
    p.nvlink_p2p = nvml->nvlink_p2p(a.pci_bus_id, b.pci_bus_id).value_or(false);
  }
  if (p.relation != PcieRelation::kUnknown) {
    p.relation_source = "NVML";
  } else {
    p.relation = relation_from_pci_paths(a.pci_path, a.numa_node, b.pci_path, b.numa_node);
    if (p.relation != PcieRelation::kUnknown) p.relation_source = "sysfs";
  }
  return p;
}

}  // namespace

MachineDiscovery discover_machine(const std::vector<int>& devices) {
  MachineDiscovery m;
  m.host = host_name();
  std::string why;
  const int count = visible_gpu_count(&why);
  if (count == 0) {
    m.no_gpu_reason = why;
    return m;
  }
  const std::vector<int> chosen = chosen_devices(devices, count);
  int runtime = 0;
  int driver = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  m.cuda_runtime = cuda_version_text(runtime);
  m.cuda_driver = cuda_version_text(driver);

  const std::unique_ptr<NvmlLibrary> nvml = NvmlLibrary::open(&m.nvml_status);
  if (nvml != nullptr) m.gpu_driver = nvml->driver_version();
  for (int d : chosen) m.gpus.push_back(describe(d, nvml.get()));
  const std::size_t n = m.gpus.size();
  m.peers.assign(n, std::vector<PeerFacts>(n));
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      if (a != b) m.peers[a][b] = peer(m.gpus[a], m.gpus[b], nvml.get());
    }
  }
  return m;
}

}  // namespace commscale

#pragma once

// What `commscale topo` (and `p2p`) learn about this machine from one process that sees every GPU:
// CUDA device properties and peer access, NVML (loaded with dlopen) for NVLink and PCIe links, sysfs
// for the PCI tree and NUMA nodes. Plain data: discovery (runtime/discovery.hpp) fills it, pure code
// (hw/topo_matrix.hpp, report/topo_*) derives the GPU x GPU matrix and the topology file from it, so
// both are tested without a GPU.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace commscale {

// How the PCIe path between two GPUs runs, as `nvidia-smi topo -m` names it.
enum class PcieRelation : std::uint8_t {
  kUnknown,
  kSingleBridge,     // PIX: at most one PCIe bridge (switch) between them
  kMultipleBridges,  // PXB: several PCIe bridges, no host bridge
  kHostBridge,       // PHB: through a PCIe host bridge (the CPU's root complex)
  kNumaNode,         // NODE: between host bridges of one NUMA node
  kSystem,           // SYS: across the interconnect between NUMA nodes (UPI, xGMI)
};

// What is at the far end of an NVLink link.
enum class NvlinkRemote : std::uint8_t { kUnknown, kGpu, kSwitch, kOther };

struct NvlinkInfo {
  int link = 0;
  bool active = false;
  NvlinkRemote remote = NvlinkRemote::kUnknown;
  std::string remote_pci_bus_id;  // normalized (normalize_pci_bus_id); empty when NVML does not say
  bool operator==(const NvlinkInfo&) const = default;
};

// A PCIe link's generation and width; 0 where unknown.
struct PcieLink {
  int generation = 0;
  int width = 0;
  [[nodiscard]] bool known() const noexcept { return generation > 0 && width > 0; }
  bool operator==(const PcieLink&) const = default;
};

struct DiscoveredGpu {
  int device = 0;          // CUDA device ordinal (under CUDA_VISIBLE_DEVICES)
  std::string name;        // "NVIDIA H200"
  std::string pci_bus_id;  // normalized: "0000:18:00.0"
  std::string uuid;        // "GPU-xxxxxxxx-..."
  Bytes memory;
  int compute_capability = 0;  // 90
  int sm_count = 0;
  int numa_node = -1;                       // from sysfs; -1 where the kernel gives none
  PcieLink pcie_max;                        // what the link can run at: the line rate
  PcieLink pcie_current;                    // what it runs at now (an idle GPU may drop to gen1)
  std::string pcie_source;                  // "NVML", "sysfs" or empty
  std::vector<NvlinkInfo> nvlinks;          // every link NVML reports, active or not; empty without NVML
  std::optional<double> nvlink_speed_MBps;  // per link and direction, as NVML reports it
  std::vector<std::string> pci_path;        // sysfs: root complex ("pci0000:00"), bridges, then the GPU
  std::string catalog_gpu;  // the catalog GPU it is (report/topo_cluster.hpp); empty when none or not looked up
  bool operator==(const DiscoveredGpu&) const = default;
};

// Facts about the ordered pair (a, b).
struct PeerFacts {
  bool can_access_peer = false;  // cudaDeviceCanAccessPeer(a, b)
  int performance_rank = -1;     // cudaDevP2PAttrPerformanceRank; -1 where unknown
  bool nvlink_p2p = false;       // NVML: P2P over NVLink is possible (nvmlDeviceGetP2PStatus)
  PcieRelation relation = PcieRelation::kUnknown;
  std::string relation_source;  // "NVML", "sysfs" or empty
  bool operator==(const PeerFacts&) const = default;
};

struct MachineDiscovery {
  std::string host;
  std::string no_gpu_reason;  // why there are no GPUs; empty when there are
  std::string gpu_driver;     // "580.159.03" from NVML; empty where unknown
  std::string cuda_driver;    // CUDA version the driver supports, "13.0"
  std::string cuda_runtime;
  std::string nvml_status;                    // empty when NVML was used; else why not
  std::vector<DiscoveredGpu> gpus;            // the devices asked for, in that order
  std::vector<std::vector<PeerFacts>> peers;  // [a][b], indices into gpus; the diagonal is unused
};

}  // namespace commscale

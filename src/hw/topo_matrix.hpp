#pragma once

// Pure derivations from a MachineDiscovery: the cells of the GPU x GPU matrix as `nvidia-smi topo -m`
// prints them (X, NV#, PIX, PXB, PHB, NODE, SYS), and the parsing of what sysfs and NVML report.
// Discovery (runtime/) calls the parsers; the topo reporters and the topology-file builder call the rest.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hw/machine.hpp"

namespace commscale {

// "0000:18:00.0": lower case, a 4-digit domain. CUDA prints "0000:3B:00.0", NVML "00000000:3B:00.0",
// sysfs "0000:3b:00.0"; all three name the same device.
[[nodiscard]] std::string normalize_pci_bus_id(std::string_view bus_id);

// The PCIe generation of a sysfs link speed ("32.0 GT/s PCIe" is gen5); nullopt for anything else.
[[nodiscard]] std::optional<int> pcie_generation_from_speed(std::string_view speed);

// The relation of two devices from their sysfs paths (root complex, bridges..., the device) and NUMA
// nodes: different root complexes are NODE on one NUMA node and SYS across nodes (an unknown node,
// -1, on both sides counts as one node); under one root complex, PHB when only the root is shared,
// else PIX when each side passes at most one bridge below the deepest shared one, else PXB. Unknown
// when either path is empty.
[[nodiscard]] PcieRelation relation_from_pci_paths(std::span<const std::string> a, int numa_a,
                                                   std::span<const std::string> b, int numa_b);

// "PIX", "PXB", "PHB", "NODE", "SYS", or "?" when unknown.
[[nodiscard]] std::string_view relation_code(PcieRelation relation) noexcept;
// relation_code under the name core/names.hpp's parse_by_name reads it back by.
[[nodiscard]] inline std::string_view name(PcieRelation relation) noexcept { return relation_code(relation); }
// What is at an NVLink's far end as topo files write it: "unknown", "gpu", "nvswitch", "other".
[[nodiscard]] std::string_view name(NvlinkRemote remote) noexcept;
// The legend line nvidia-smi prints for the code.
[[nodiscard]] std::string_view relation_meaning(PcieRelation relation) noexcept;

// The NVLink links between two discovered GPUs: direct links (active links of `a` whose far end is
// `b`), or, where both reach an NVSwitch, the fewer of their active links to switches (NCCL and
// nvidia-smi count NV18 between any two GPUs of an HGX H100 baseboard), or, where NVML says the pair
// talks over NVLink but no link names `b` by bus id (as in a VM that reports the host's ids), `a`'s
// links to unknown GPUs shared evenly among such peers.
struct NvlinkConnection {
  int lanes = 0;
  bool via_switch = false;
};
[[nodiscard]] NvlinkConnection nvlink_connection(const MachineDiscovery& m, std::size_t a, std::size_t b);

// Active links of a GPU, and those of them that end at an NVSwitch.
[[nodiscard]] int active_nvlinks(const DiscoveredGpu& gpu) noexcept;
[[nodiscard]] int switch_nvlinks(const DiscoveredGpu& gpu) noexcept;

// The matrix cell of (a, b): "X" on the diagonal, "NV<lanes>" over NVLink, else the PCIe relation code.
[[nodiscard]] std::string topo_cell(const MachineDiscovery& m, std::size_t a, std::size_t b);

// "gen5 x16", or "unknown".
[[nodiscard]] std::string pcie_text(const PcieLink& link);

}  // namespace commscale

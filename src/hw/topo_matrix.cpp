#include "hw/topo_matrix.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace commscale {

std::string normalize_pci_bus_id(std::string_view bus_id) {
  std::string text;
  for (char c : bus_id) {
    if (!std::isspace(static_cast<unsigned char>(c)))
      text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const std::size_t first = text.find(':');
  if (first == std::string::npos) return text;
  if (text.find(':', first + 1) == std::string::npos) return "0000:" + text;  // "bus:device.function"
  if (first > 4) text.erase(0, first - 4);  // NVML's 8-digit domain: its leading digits are zero
  if (first < 4) text.insert(0, 4 - first, '0');
  return text;
}

std::optional<int> pcie_generation_from_speed(std::string_view speed) {
  double gts = 0.0;
  const auto [end, ec] = std::from_chars(speed.data(), speed.data() + speed.size(), gts);
  if (ec != std::errc() || end == speed.data()) return std::nullopt;
  // Transfer rate per lane of each generation, GT/s.
  static constexpr std::array<double, 7> kRates = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0};
  for (std::size_t g = 0; g < kRates.size(); ++g) {
    if (std::abs(gts - kRates[g]) < 0.01) return static_cast<int>(g) + 1;
  }
  return std::nullopt;
}

PcieRelation relation_from_pci_paths(std::span<const std::string> a, int numa_a, std::span<const std::string> b,
                                     int numa_b) {
  if (a.empty() || b.empty()) return PcieRelation::kUnknown;
  if (a.front() != b.front()) return numa_a == numa_b ? PcieRelation::kNumaNode : PcieRelation::kSystem;
  const auto [mismatch_a, mismatch_b] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  const auto shared = static_cast<std::size_t>(mismatch_a - a.begin());
  if (shared <= 1) return PcieRelation::kHostBridge;
  // Bridges each side passes below the deepest shared component, not counting the device itself.
  const std::size_t below_a = a.size() > shared ? a.size() - shared - 1 : 0;
  const std::size_t below_b = b.size() > shared ? b.size() - shared - 1 : 0;
  return std::max(below_a, below_b) <= 1 ? PcieRelation::kSingleBridge : PcieRelation::kMultipleBridges;
}

std::string_view relation_code(PcieRelation relation) noexcept {
  switch (relation) {
    case PcieRelation::kUnknown:
      return "?";
    case PcieRelation::kSingleBridge:
      return "PIX";
    case PcieRelation::kMultipleBridges:
      return "PXB";
    case PcieRelation::kHostBridge:
      return "PHB";
    case PcieRelation::kNumaNode:
      return "NODE";
    case PcieRelation::kSystem:
      return "SYS";
  }
  return "?";
}

std::string_view name(NvlinkRemote remote) noexcept {
  switch (remote) {
    case NvlinkRemote::kUnknown:
      return "unknown";
    case NvlinkRemote::kGpu:
      return "gpu";
    case NvlinkRemote::kSwitch:
      return "nvswitch";
    case NvlinkRemote::kOther:
      return "other";
  }
  return "unknown";
}

std::string_view relation_meaning(PcieRelation relation) noexcept {
  switch (relation) {
    case PcieRelation::kUnknown:
      return "Unknown: neither NVML nor sysfs describes the PCIe path";
    case PcieRelation::kSingleBridge:
      return "Connection traversing at most a single PCIe bridge";
    case PcieRelation::kMultipleBridges:
      return "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)";
    case PcieRelation::kHostBridge:
      return "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)";
    case PcieRelation::kNumaNode:
      return "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node";
    case PcieRelation::kSystem:
      return "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)";
  }
  return "";
}

int active_nvlinks(const DiscoveredGpu& gpu) noexcept {
  return static_cast<int>(
      std::count_if(gpu.nvlinks.begin(), gpu.nvlinks.end(), [](const NvlinkInfo& l) { return l.active; }));
}

int switch_nvlinks(const DiscoveredGpu& gpu) noexcept {
  return static_cast<int>(std::count_if(gpu.nvlinks.begin(), gpu.nvlinks.end(), [](const NvlinkInfo& l) {
    return l.active && l.remote == NvlinkRemote::kSwitch;
  }));
}

namespace {

bool is_discovered_gpu(const MachineDiscovery& m, const std::string& bus) {
  return std::any_of(m.gpus.begin(), m.gpus.end(), [&](const DiscoveredGpu& g) { return g.pci_bus_id == bus; });
}

// Active links of gpus[a] that end at gpus[b] (a peer GPU, not a switch).
int direct_links(const MachineDiscovery& m, std::size_t a, std::size_t b) {
  const std::string& to_bus = m.gpus[b].pci_bus_id;
  return static_cast<int>(std::count_if(m.gpus[a].nvlinks.begin(), m.gpus[a].nvlinks.end(), [&](const NvlinkInfo& l) {
    return l.active && l.remote != NvlinkRemote::kSwitch && !to_bus.empty() && l.remote_pci_bus_id == to_bus;
  }));
}

bool nvlink_p2p(const MachineDiscovery& m, std::size_t a, std::size_t b) {
  return a < m.peers.size() && b < m.peers[a].size() && m.peers[a][b].nvlink_p2p;
}

// Links whose far end is a GPU that is not among the discovered ones by bus id (a VM may report the
// host's bus ids), shared evenly among the NVLink peers (NVML's P2P status) that no link names.
int unattributed_links(const MachineDiscovery& m, std::size_t a, std::size_t b) {
  if (!nvlink_p2p(m, a, b)) return 0;
  const int unmatched =
      static_cast<int>(std::count_if(m.gpus[a].nvlinks.begin(), m.gpus[a].nvlinks.end(), [&](const NvlinkInfo& l) {
        return l.active && l.remote != NvlinkRemote::kSwitch && !is_discovered_gpu(m, l.remote_pci_bus_id);
      }));
  int unnamed_peers = 0;
  for (std::size_t c = 0; c < m.gpus.size(); ++c) {
    if (c != a && nvlink_p2p(m, a, c) && direct_links(m, a, c) == 0) ++unnamed_peers;
  }
  return unnamed_peers > 0 ? unmatched / unnamed_peers : 0;
}

}  // namespace

NvlinkConnection nvlink_connection(const MachineDiscovery& m, std::size_t a, std::size_t b) {
  if (a == b || a >= m.gpus.size() || b >= m.gpus.size()) return {};
  const int direct = direct_links(m, a, b);
  if (direct > 0) return {direct, false};
  const int switched = std::min(switch_nvlinks(m.gpus[a]), switch_nvlinks(m.gpus[b]));
  if (switched > 0) return {switched, true};
  const int unattributed = unattributed_links(m, a, b);
  return unattributed > 0 ? NvlinkConnection{unattributed, false} : NvlinkConnection{};
}

std::string topo_cell(const MachineDiscovery& m, std::size_t a, std::size_t b) {
  if (a == b) return "X";
  const NvlinkConnection nv = nvlink_connection(m, a, b);
  if (nv.lanes > 0) return fmt::format("NV{}", nv.lanes);
  if (a < m.peers.size() && b < m.peers[a].size()) return std::string(relation_code(m.peers[a][b].relation));
  return "?";
}

std::string pcie_text(const PcieLink& link) {
  return link.known() ? fmt::format("gen{} x{}", link.generation, link.width) : "unknown";
}

}  // namespace commscale

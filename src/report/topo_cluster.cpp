#include "report/topo_cluster.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/gpu_match.hpp"
#include "hw/topo_matrix.hpp"

namespace commscale {
namespace {

using hw::DeviceKind;
using hw::DeviceRef;
using hw::LinkSpec;
using hw::LinkType;

bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// The GPUs' CPU: one cpu device per NUMA node that has GPUs, numbered in node order.
std::vector<int> cpu_of_gpus(const MachineDiscovery& m, int* cpus) {
  std::vector<int> nodes;
  for (const DiscoveredGpu& g : m.gpus) {
    if (g.numa_node >= 0) nodes.push_back(g.numa_node);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  *cpus = std::max<int>(1, static_cast<int>(nodes.size()));
  std::vector<int> cpu;
  for (const DiscoveredGpu& g : m.gpus) {
    const auto at = std::find(nodes.begin(), nodes.end(), g.numa_node);
    cpu.push_back(at == nodes.end() ? 0 : static_cast<int>(at - nodes.begin()));
  }
  return cpu;
}

// Groups of GPUs that share a PCIe switch (PIX or PXB between them), by union of pairs.
std::vector<std::vector<int>> switch_groups(const MachineDiscovery& m) {
  const int n = static_cast<int>(m.gpus.size());
  std::vector<int> group(static_cast<std::size_t>(n));
  std::iota(group.begin(), group.end(), 0);
  const auto root = [&](int g) {
    while (group[static_cast<std::size_t>(g)] != g) g = group[static_cast<std::size_t>(g)];
    return g;
  };
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const PcieRelation r = m.peers.at(static_cast<std::size_t>(a)).at(static_cast<std::size_t>(b)).relation;
      if (r == PcieRelation::kSingleBridge || r == PcieRelation::kMultipleBridges)
        group[static_cast<std::size_t>(root(b))] = root(a);
    }
  }
  std::map<int, std::vector<int>> members;
  for (int g = 0; g < n; ++g) members[root(g)].push_back(g);
  std::vector<std::vector<int>> out;
  for (auto& [first, gpus] : members) {
    if (gpus.size() > 1) out.push_back(std::move(gpus));
  }
  return out;
}

LinkSpec link(DeviceRef a, DeviceRef b, LinkType type, int lanes, int generation = 0) {
  LinkSpec l;
  l.a = a;
  l.b = b;
  l.type = type;
  l.lanes = lanes;
  l.generation = generation;
  return l;
}

// A GPU's PCIe link as the file can state it: the discovered maximum, else the catalog's (noted).
PcieLink pcie_of(const DiscoveredGpu& g, const hw::GpuSpec& gpu, const hw::ReferenceData& ref,
                 std::vector<std::string>* notes) {
  const int width = g.pcie_max.width;
  const bool width_ok = width == 1 || width == 2 || width == 4 || width == 8 || width == 16 || width == 32;
  if (g.pcie_max.known() && width_ok && ref.pcie_x16_bw.contains(g.pcie_max.generation)) {
    return g.pcie_max;
  }
  notes->push_back(fmt::format(
      "CUDA device {}: PCIe link {} not usable here (discovered: {}); the catalog's gen{} x{} is written instead",
      g.device, pcie_text(g.pcie_max), g.pcie_source.empty() ? "none" : g.pcie_source,
      gpu.pcie.generation.value.value_or(0), gpu.pcie.lanes.value.value_or(0)));
  return {gpu.pcie.generation.value.value_or(4), gpu.pcie.lanes.value.value_or(16)};
}

void add_pcie_links(const MachineDiscovery& m, const hw::GpuSpec& gpu, const hw::ReferenceData& ref,
                    hw::ClusterSpec& c) {
  int cpus = 1;
  const std::vector<int> cpu = cpu_of_gpus(m, &cpus);
  c.node.device_count[static_cast<std::size_t>(DeviceKind::kCpu)] = cpus;
  const std::vector<std::vector<int>> groups = switch_groups(m);
  c.node.device_count[static_cast<std::size_t>(DeviceKind::kPcieSwitch)] = static_cast<int>(groups.size());
  std::vector<int> switch_of(m.gpus.size(), -1);
  for (std::size_t s = 0; s < groups.size(); ++s) {
    for (int g : groups[s]) switch_of[static_cast<std::size_t>(g)] = static_cast<int>(s);
  }
  std::vector<bool> uplinked(groups.size(), false);
  for (std::size_t g = 0; g < m.gpus.size(); ++g) {
    const PcieLink p = pcie_of(m.gpus[g], gpu, ref, &c.notes);
    const DeviceRef self{DeviceKind::kGpu, static_cast<int>(g)};
    const DeviceRef host{DeviceKind::kCpu, cpu[g]};
    if (switch_of[g] < 0) {
      c.node.links.push_back(link(self, host, LinkType::kPcie, p.width, p.generation));
      continue;
    }
    const auto s = static_cast<std::size_t>(switch_of[g]);
    const DeviceRef sw{DeviceKind::kPcieSwitch, switch_of[g]};
    c.node.links.push_back(link(self, sw, LinkType::kPcie, p.width, p.generation));
    if (!uplinked[s]) {
      uplinked[s] = true;
      LinkSpec up = link(sw, host, LinkType::kPcie, p.width, p.generation);
      up.note =
          "uplink assumed as wide and fast as the GPU links below it (discovery cannot see the switch's own link)";
      c.node.links.push_back(up);
    }
  }
  for (int a = 0; a < cpus; ++a) {
    for (int b = a + 1; b < cpus; ++b) {
      LinkSpec l = link({DeviceKind::kCpu, a}, {DeviceKind::kCpu, b}, LinkType::kCpu, 0);
      l.bw_given =
          hw::figure(GBps(64.0), hw::SourceTag::kUnverified,
                     "placeholder: commscale topo cannot measure the bandwidth between CPU sockets (UPI/xGMI)");
      c.node.links.push_back(l);
    }
  }
}

void add_nvlinks(const MachineDiscovery& m, hw::ClusterSpec& c) {
  const std::size_t n = m.gpus.size();
  bool any_switch = false;
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) {
      const NvlinkConnection nv = nvlink_connection(m, a, b);
      any_switch = any_switch || nv.via_switch;
      if (nv.lanes > 0 && !nv.via_switch) {
        c.node.links.push_back(link({DeviceKind::kGpu, static_cast<int>(a)}, {DeviceKind::kGpu, static_cast<int>(b)},
                                    LinkType::kNvlink, nv.lanes));
      }
    }
  }
  if (!any_switch) return;
  c.node.device_count[static_cast<std::size_t>(DeviceKind::kNvswitch)] = 1;
  for (std::size_t g = 0; g < n; ++g) {
    const int lanes = switch_nvlinks(m.gpus[g]);
    if (lanes > 0) {
      c.node.links.push_back(
          link({DeviceKind::kGpu, static_cast<int>(g)}, {DeviceKind::kNvswitch, 0}, LinkType::kNvlink, lanes));
    }
  }
}

// P2P over PCIe as this machine's driver allows it, for GPU pairs that have no NVLink between them.
std::optional<bool> measured_pcie_p2p(const MachineDiscovery& m) {
  std::optional<bool> allowed;
  for (std::size_t a = 0; a < m.gpus.size(); ++a) {
    for (std::size_t b = 0; b < m.gpus.size(); ++b) {
      if (a == b || nvlink_connection(m, a, b).lanes > 0) continue;
      allowed = allowed.value_or(true) && m.peers.at(a).at(b).can_access_peer;
    }
  }
  return allowed;
}

void check_one_model(const MachineDiscovery& m) {
  for (const DiscoveredGpu& g : m.gpus) {
    if (g.name != m.gpus.front().name) {
      throw InputError(
          "--devices",
          fmt::format("GPU {} is {} but GPU {} is {}", m.gpus.front().device, m.gpus.front().name, g.device, g.name),
          "GPUs of one model (a topology file describes one GPU model): pick them with --devices");
    }
  }
}

}  // namespace

std::optional<std::string> catalog_gpu_for(const DiscoveredGpu& gpu, const hw::Catalog& catalog) {
  std::string upper(gpu.name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  if (has(upper, " NVL") || has(upper, " TI") || has(upper, "4090 D")) return std::nullopt;
  const std::optional<std::string> name = hw::match_gpu_name(gpu.name, catalog.gpu_names());
  if (!name) return std::nullopt;
  const std::optional<Bytes> memory = catalog.gpu(*name, "catalog GPU").memory.value;
  // CUDA reports what the driver leaves usable: 139.8 GiB of the H200's 141, 44.5 of the L40S's 48.
  const double share = memory && memory->count() > 0 ? gpu.memory.gib() / memory->gib() : 1.0;
  if (share < 0.85 || share > 1.05) return std::nullopt;
  return name;
}

void match_catalog_gpus(MachineDiscovery& m, const hw::Catalog& catalog) {
  for (DiscoveredGpu& g : m.gpus) g.catalog_gpu = catalog_gpu_for(g, catalog).value_or("");
}

hw::ClusterSpec cluster_from_discovery(const MachineDiscovery& m, const TopologyRequest& request,
                                       const hw::ReferenceData& ref) {
  check_one_model(m);
  hw::ClusterSpec c;
  c.name = request.name;
  c.file = request.file;
  c.gpu_ref = request.gpu_ref;
  c.gpu = request.gpu;
  const std::size_t n = m.gpus.size();
  c.description = fmt::format("{} discovered by commscale topo: {}x {}", m.host, n, m.gpus.front().name);
  const std::string nvml = m.nvml_status.empty() ? fmt::format("NVML (driver {})", m.gpu_driver)
                                                 : fmt::format("no NVML ({})", m.nvml_status);
  c.layout = {hw::SourceTag::kMeasured,
              fmt::format("commscale topo on {} {}: CUDA device properties and peer access, {}, sysfs", m.host,
                          request.date, nvml),
              "cpu devices are the NUMA nodes the GPUs hang off; PCIe switches are inferred from GPUs that "
              "share one (PIX/PXB); NICs are not discovered"};
  c.node.device_count[static_cast<std::size_t>(DeviceKind::kGpu)] = static_cast<int>(n);
  add_nvlinks(m, c);
  add_pcie_links(m, request.gpu, ref, c);
  if (const std::optional<bool> p2p = measured_pcie_p2p(m)) c.transports.pcie_p2p = *p2p;
  for (const DiscoveredGpu& g : m.gpus) {
    c.notes.push_back(fmt::format(
        "gpu{}: CUDA device {}, {}, PCI {}, NUMA node {}, PCIe {} (now {}), {} of {} NVLink links active",
        &g - m.gpus.data(), g.device, g.name, g.pci_bus_id, g.numa_node >= 0 ? std::to_string(g.numa_node) : "unknown",
        pcie_text(g.pcie_max), pcie_text(g.pcie_current), active_nvlinks(g), g.nvlinks.size()));
  }
  if (!m.gpu_driver.empty()) c.notes.push_back(fmt::format("driver {}, CUDA {}", m.gpu_driver, m.cuda_driver));
  hw::validate_cluster(c);
  return c;
}

}  // namespace commscale

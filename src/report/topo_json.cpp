// The JSON and CSV forms of `commscale topo`.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hw/topo_matrix.hpp"
#include "report/topo_reporters.hpp"

namespace commscale {
namespace {

std::string_view remote_name(NvlinkRemote r) {
  switch (r) {
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

nlohmann::json pcie_json(const PcieLink& p) {
  if (!p.known()) return nullptr;
  return {{"generation", p.generation}, {"width", p.width}};
}

nlohmann::json gpu_json(const DiscoveredGpu& g) {
  nlohmann::json links = nlohmann::json::array();
  for (const NvlinkInfo& l : g.nvlinks) {
    links.push_back({{"link", l.link},
                     {"active", l.active},
                     {"remote", remote_name(l.remote)},
                     {"remote_pci_bus_id", l.remote_pci_bus_id}});
  }
  return {{"device", g.device},
          {"name", g.name},
          {"catalog_gpu", g.catalog_gpu.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.catalog_gpu)},
          {"pci_bus_id", g.pci_bus_id},
          {"uuid", g.uuid},
          {"memory_bytes", g.memory.count()},
          {"compute_capability", g.compute_capability},
          {"sm_count", g.sm_count},
          {"numa_node", g.numa_node >= 0 ? nlohmann::json(g.numa_node) : nlohmann::json(nullptr)},
          {"pcie_max", pcie_json(g.pcie_max)},
          {"pcie_current", pcie_json(g.pcie_current)},
          {"pcie_source", g.pcie_source},
          {"pci_path", g.pci_path},
          {"nvlink_speed_MBps", g.nvlink_speed_MBps ? nlohmann::json(*g.nvlink_speed_MBps) : nlohmann::json(nullptr)},
          {"nvlinks", links}};
}

}  // namespace

nlohmann::json topo_json(const MachineDiscovery& m, const RunContext& context) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const DiscoveredGpu& g : m.gpus) gpus.push_back(gpu_json(g));
  nlohmann::json pairs = nlohmann::json::array();
  for (std::size_t a = 0; a < m.gpus.size(); ++a) {
    for (std::size_t b = 0; b < m.gpus.size(); ++b) {
      if (a == b) continue;
      const PeerFacts& p = m.peers[a][b];
      const NvlinkConnection nv = nvlink_connection(m, a, b);
      pairs.push_back({{"a", a},
                       {"b", b},
                       {"link", topo_cell(m, a, b)},
                       {"nvlink_lanes", nv.lanes},
                       {"via_nvswitch", nv.via_switch},
                       {"pcie_relation", relation_code(p.relation)},
                       {"pcie_relation_source", p.relation_source},
                       {"can_access_peer", p.can_access_peer},
                       {"nvml_nvlink_p2p", p.nvlink_p2p},
                       {"performance_rank", p.performance_rank}});
    }
  }
  return {{"schema_version", kTopoSchemaVersion},
          {"kind", "commscale-topo"},
          {"context", context},
          {"host", m.host},
          {"no_gpu_reason", m.no_gpu_reason},
          {"gpu_driver", m.gpu_driver},
          {"cuda_driver", m.cuda_driver},
          {"cuda_runtime", m.cuda_runtime},
          {"nvml_status", m.gpus.empty()          ? nlohmann::json(nullptr)
                          : m.nvml_status.empty() ? nlohmann::json("used")
                                                  : nlohmann::json(m.nvml_status)},
          {"gpus", gpus},
          {"pairs", pairs}};
}

std::string topo_csv(const MachineDiscovery& m) {
  std::string out = "gpu_a,gpu_b,link,nvlink_lanes,via_nvswitch,pcie_relation,p2p,performance_rank\n";
  for (std::size_t a = 0; a < m.gpus.size(); ++a) {
    for (std::size_t b = 0; b < m.gpus.size(); ++b) {
      if (a == b) continue;
      const PeerFacts& p = m.peers[a][b];
      const NvlinkConnection nv = nvlink_connection(m, a, b);
      out += fmt::format("{},{},{},{},{},{},{},{}\n", a, b, topo_cell(m, a, b), nv.lanes, nv.via_switch ? 1 : 0,
                         relation_code(p.relation), p.can_access_peer ? 1 : 0, p.performance_rank);
    }
  }
  return out;
}

}  // namespace commscale

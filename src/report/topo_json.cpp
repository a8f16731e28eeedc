// The JSON and CSV forms of `commscale topo`, and the JSON form read back for `commscale report`.

#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/names.hpp"
#include "hw/topo_matrix.hpp"
#include "report/topo_reporters.hpp"

namespace commscale {
namespace {

constexpr std::array<NvlinkRemote, 4> kRemotes = {NvlinkRemote::kUnknown, NvlinkRemote::kGpu, NvlinkRemote::kSwitch,
                                                  NvlinkRemote::kOther};
constexpr std::array<PcieRelation, 6> kRelations = {PcieRelation::kUnknown,         PcieRelation::kSingleBridge,
                                                    PcieRelation::kMultipleBridges, PcieRelation::kHostBridge,
                                                    PcieRelation::kNumaNode,        PcieRelation::kSystem};

nlohmann::json pcie_json(const PcieLink& p) {
  if (!p.known()) return nullptr;
  return {{"generation", p.generation}, {"width", p.width}};
}

PcieLink pcie_from_json(const JsonAt& in, std::string_view key) {
  const std::optional<JsonAt> p = in.nullable(key);  // null: a link of unknown speed
  if (!p) return {};
  return {static_cast<int>(p->number("generation")), static_cast<int>(p->number("width"))};
}

template <class T>
nlohmann::json or_null(bool present, const T& value) {
  return present ? nlohmann::json(value) : nlohmann::json(nullptr);
}

nlohmann::json gpu_json(const DiscoveredGpu& g) {
  nlohmann::json links = nlohmann::json::array();
  for (const NvlinkInfo& l : g.nvlinks) {
    links.push_back({{"link", l.link},
                     {"active", l.active},
                     {"remote", name(l.remote)},
                     {"remote_pci_bus_id", l.remote_pci_bus_id}});
  }
  return {{"device", g.device},
          {"name", g.name},
          {"catalog_gpu", or_null(!g.catalog_gpu.empty(), g.catalog_gpu)},
          {"pci_bus_id", g.pci_bus_id},
          {"uuid", g.uuid},
          {"memory_bytes", g.memory.count()},
          {"compute_capability", g.compute_capability},
          {"sm_count", g.sm_count},
          {"numa_node", or_null(g.numa_node >= 0, g.numa_node)},
          {"pcie_max", pcie_json(g.pcie_max)},
          {"pcie_current", pcie_json(g.pcie_current)},
          {"pcie_source", g.pcie_source},
          {"pci_path", g.pci_path},
          {"nvlink_speed_MBps", or_null(g.nvlink_speed_MBps.has_value(), g.nvlink_speed_MBps.value_or(0.0))},
          {"nvlinks", links}};
}

DiscoveredGpu gpu_from_json(const JsonAt& in) {
  DiscoveredGpu g;
  g.device = static_cast<int>(in.number("device"));
  g.name = in.string("name");
  if (in.nullable("catalog_gpu")) g.catalog_gpu = in.string("catalog_gpu");
  g.pci_bus_id = in.string("pci_bus_id");
  g.uuid = in.string("uuid");
  g.memory = Bytes(static_cast<std::uint64_t>(in.number("memory_bytes")));
  g.compute_capability = static_cast<int>(in.number("compute_capability"));
  g.sm_count = static_cast<int>(in.number("sm_count"));
  g.numa_node = in.nullable("numa_node") ? static_cast<int>(in.number("numa_node")) : -1;
  g.pcie_max = pcie_from_json(in, "pcie_max");
  g.pcie_current = pcie_from_json(in, "pcie_current");
  g.pcie_source = in.string("pcie_source");
  for (const JsonAt& p : in.array("pci_path")) g.pci_path.push_back(p.as_string());
  if (in.nullable("nvlink_speed_MBps")) g.nvlink_speed_MBps = in.number("nvlink_speed_MBps");
  for (const JsonAt& l : in.array("nvlinks")) {
    g.nvlinks.push_back({static_cast<int>(l.number("link")), l.flag("active"),
                         parse_by_name(kRemotes, l.string("remote"), l.at("remote").where(), "NVLink remote"), l.string("remote_pci_bus_id")});
  }
  return g;
}

nlohmann::json pair_json(const TopoPair& p) {
  return {{"a", p.a},
          {"b", p.b},
          {"link", p.link},
          {"nvlink_lanes", p.nvlink_lanes},
          {"via_nvswitch", p.via_nvswitch},
          {"pcie_relation", relation_code(p.facts.relation)},
          {"pcie_relation_source", p.facts.relation_source},
          {"can_access_peer", p.facts.can_access_peer},
          {"nvml_nvlink_p2p", p.facts.nvlink_p2p},
          {"performance_rank", p.facts.performance_rank}};
}

TopoPair pair_from_json(const JsonAt& in) {
  TopoPair p;
  p.a = static_cast<int>(in.number("a"));
  p.b = static_cast<int>(in.number("b"));
  p.link = in.string("link");
  p.nvlink_lanes = static_cast<int>(in.number("nvlink_lanes"));
  p.via_nvswitch = in.flag("via_nvswitch");
  p.facts.relation =
      parse_by_name(kRelations, in.string("pcie_relation"), in.at("pcie_relation").where(), "PCIe relation");
  p.facts.relation_source = in.string("pcie_relation_source");
  p.facts.can_access_peer = in.flag("can_access_peer");
  p.facts.nvlink_p2p = in.flag("nvml_nvlink_p2p");
  p.facts.performance_rank = static_cast<int>(in.number("performance_rank"));
  return p;
}

}  // namespace

TopoFile topo_file(const MachineDiscovery& m, const RunContext& context) {
  TopoFile t{context,     m.host,          m.no_gpu_reason, m.gpu_driver, m.cuda_driver, m.cuda_runtime,
             std::nullopt, m.gpus,         {}};
  if (!m.gpus.empty()) t.nvml_status = m.nvml_status.empty() ? "used" : m.nvml_status;
  for (std::size_t a = 0; a < m.gpus.size(); ++a) {
    for (std::size_t b = 0; b < m.gpus.size(); ++b) {
      if (a == b) continue;
      const NvlinkConnection nv = nvlink_connection(m, a, b);
      t.pairs.push_back({static_cast<int>(a), static_cast<int>(b), topo_cell(m, a, b), nv.lanes, nv.via_switch,
                         m.peers[a][b]});
    }
  }
  return t;
}

void to_json(nlohmann::json& out, const TopoFile& t) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const DiscoveredGpu& g : t.gpus) gpus.push_back(gpu_json(g));
  nlohmann::json pairs = nlohmann::json::array();
  for (const TopoPair& p : t.pairs) pairs.push_back(pair_json(p));
  out = {{"schema_version", kTopoSchemaVersion},
         {"kind", "commscale-topo"},
         {"context", t.context},
         {"host", t.host},
         {"no_gpu_reason", t.no_gpu_reason},
         {"gpu_driver", t.gpu_driver},
         {"cuda_driver", t.cuda_driver},
         {"cuda_runtime", t.cuda_runtime},
         {"nvml_status", or_null(t.nvml_status.has_value(), t.nvml_status.value_or(""))},
         {"gpus", gpus},
         {"pairs", pairs}};
}

nlohmann::json topo_json(const MachineDiscovery& m, const RunContext& context) { return topo_file(m, context); }

TopoFile topo_from_json(const JsonAt& in) {
  TopoFile t;
  from_json(in.at("context"), t.context);
  t.host = in.string("host");
  t.no_gpu_reason = in.string("no_gpu_reason");
  t.gpu_driver = in.string("gpu_driver");
  t.cuda_driver = in.string("cuda_driver");
  t.cuda_runtime = in.string("cuda_runtime");
  if (in.nullable("nvml_status")) t.nvml_status = in.string("nvml_status");
  for (const JsonAt& g : in.array("gpus")) t.gpus.push_back(gpu_from_json(g));
  for (const JsonAt& p : in.array("pairs")) t.pairs.push_back(pair_from_json(p));
  return t;
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

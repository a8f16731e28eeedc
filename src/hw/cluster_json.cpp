// The file form of a cluster, as `topo` writes it and `hw show --json` prints it.

#include "hw/cluster_spec.hpp"
#include "hw/figure_io.hpp"

namespace commscale::hw {
namespace {

double gbps(GBps b) { return b.value(); }
double us(Seconds s) { return to_us(s); }

nlohmann::ordered_json link_json(const LinkSpec& l) {
  nlohmann::ordered_json out;
  out["a"] = device_name(l.a);
  out["b"] = device_name(l.b);
  out["type"] = name(l.type);
  if (l.type == LinkType::kNvlink) out["lanes"] = l.lanes;
  if (l.type == LinkType::kPcie) {
    out["generation"] = l.generation;
    out["width"] = l.lanes;
  }
  if (l.bw_given) out["bw_GBps"] = figure_json(*l.bw_given, gbps);
  if (l.latency_given) out["latency_us"] = figure_json(*l.latency_given, us);
  if (!l.note.empty()) out["note"] = l.note;
  return out;
}

nlohmann::ordered_json node_json(const NodeSpec& node) {
  nlohmann::ordered_json out;
  nlohmann::ordered_json devices = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < kDeviceKindCount; ++k) {
    const auto kind = static_cast<DeviceKind>(k);
    if (node.device_count[k] > 0 || kind == DeviceKind::kGpu || kind == DeviceKind::kCpu) {
      devices[std::string(name(kind))] = node.device_count[k];
    }
  }
  out["devices"] = devices;
  if (node.nvswitch_chips) out["nvswitch_chips"] = figure_json(*node.nvswitch_chips);
  out["links"] = nlohmann::ordered_json::array();
  for (const LinkSpec& l : node.links) out["links"].push_back(link_json(l));
  return out;
}

nlohmann::ordered_json transports_json(const Transports& t) {
  nlohmann::ordered_json out;
  out["p2p"] = t.p2p;
  out["shm"] = t.shm;
  if (t.pcie_p2p) out["pcie_p2p"] = *t.pcie_p2p;
  return out;
}

nlohmann::ordered_json network_json(const NetworkSpec& n) {
  nlohmann::ordered_json out;
  out["technology"] = n.technology;
  out["nic_rate_Gbps"] = figure_json(n.nic_rate_Gbps);
  if (n.nccl_port_GBps) out["nccl_port_GBps"] = figure_json(*n.nccl_port_GBps);
  out["topology"] = "nonblocking";
  if (n.latency_given) out["latency_us"] = figure_json(*n.latency_given, us);
  return out;
}

nlohmann::ordered_json measurement_json(const Measurement& m) {
  nlohmann::ordered_json out;
  out["collective"] = name(m.collective);
  out["size"] = m.size;
  out["busbw_GBps"] = m.busbw_GBps;
  out["algbw_GBps"] = m.algbw_GBps;
  if (m.time_1KiB_us) out["time_1KiB_us"] = *m.time_1KiB_us;
  if (!m.env.empty()) out["env"] = m.env;
  out["source"] = m.source;
  return out;
}

}  // namespace

nlohmann::ordered_json cluster_to_json(const ClusterSpec& c) {
  nlohmann::ordered_json out;
  out["schema_version"] = kSchemaVersion;
  out["kind"] = "cluster";
  out["name"] = c.name;
  out["description"] = c.description;
  out["gpu"] = c.gpu_ref;
  out["layout"] = provenance_json(c.layout);
  out["node"] = node_json(c.node);
  out["transports"] = transports_json(c.transports);
  if (c.network) out["network"] = network_json(*c.network);
  if (c.system_price_USD) out["system_price_USD"] = figure_json(*c.system_price_USD);
  if (c.host_price_USD) out["host_price_USD"] = figure_json(*c.host_price_USD);
  if (c.nic_price_USD) out["nic_price_USD"] = figure_json(*c.nic_price_USD);
  if (c.switch_port_price_USD) out["switch_port_price_USD"] = figure_json(*c.switch_port_price_USD);
  if (c.host_power_W) out["host_power_W"] = figure_json(*c.host_power_W);
  if (c.host_memory_GiB) out["host_memory_GiB"] = figure_json(*c.host_memory_GiB);
  if (c.host_memory_bw_GBps) out["host_memory_bw_GBps"] = figure_json(*c.host_memory_bw_GBps);
  if (c.host_cpu_cores) out["host_cpu_cores"] = figure_json(*c.host_cpu_cores);
  if (!c.measurements.empty()) {
    out["measurements"] = nlohmann::ordered_json::array();
    for (const Measurement& m : c.measurements) out["measurements"].push_back(measurement_json(m));
  }
  if (!c.notes.empty()) out["notes"] = c.notes;
  return out;
}

}  // namespace commscale::hw

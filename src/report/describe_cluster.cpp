// `hw list` and `hw show` for clusters: the file's description and what the link graph derives.

#include <numeric>

#include <fmt/format.h>

#include "report/hw_describe.hpp"
#include "hw/figure_io.hpp"
#include "core/text_table.hpp"

namespace commscale::hw {
namespace {

std::string devices_line(const NodeSpec& node) {
  std::string out;
  for (std::size_t k = 0; k < kDeviceKindCount; ++k) {
    if (node.device_count[k] == 0) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", node.device_count[k], name(static_cast<DeviceKind>(k)));
    if (static_cast<DeviceKind>(k) == DeviceKind::kNvswitch && node.nvswitch_chips) {
      out +=
          fmt::format(" ({} chips, {})", *node.nvswitch_chips->value, tag_letter(node.nvswitch_chips->provenance.tag));
    }
  }
  return out;
}

std::string transports_line(const ClusterSpec& c) {
  const std::string set_here = "on (set here: through CPUs too, as NCCL_P2P_LEVEL=SYS)";
  const std::string pcie = c.transports.pcie_p2p ? (*c.transports.pcie_p2p ? set_here : "off (set here)")
                                                 : (c.pcie_p2p_allowed() ? "on (GPU catalog)" : "off (GPU catalog)");
  return fmt::format("P2P {}, SHM {}, PCIe P2P {}", c.transports.p2p ? "on" : "off (NCCL_P2P_DISABLE=1)",
                     c.transports.shm ? "on" : "off (NCCL_SHM_DISABLE=1)", pcie);
}

std::string links_table(const ClusterSpec& c) {
  TextTable t({"type", "a", "b", "lanes>", "GB/s/dir>", "latency us>", "bandwidth source"});
  for (const LinkSpec& l : c.node.links) {
    t.add({std::string(name(l.type)), device_name(l.a), device_name(l.b), l.lanes > 0 ? fmt::format("{}", l.lanes) : "",
           fmt::format("{:g}", l.bw.value->value()), fmt::format("{:g}", to_us(*l.latency.value)),
           fmt::format("{}: {}", tag_letter(l.bw.provenance.tag), l.bw.provenance.source)});
  }
  return t.render("  ");
}

std::string paths_table(const LinkGraph& g) {
  TextTable t({"from", "to", "class", "NCCL", "GB/s/dir>", "latency us>", "route"});
  for (const Path& p : paths_from_rank0(g)) {
    t.add({fmt::format("{}", p.src), fmt::format("{}", p.dst), std::string(name(p.path_class)),
           std::string(name(nccl_hw_class(p.path_class))), fmt::format("{:g}", p.bw.value()),
           fmt::format("{:g}", to_us(p.latency)), g.describe(p)});
  }
  return t.render("  ");
}

std::vector<int> all_ranks(const LinkGraph& g) {
  std::vector<int> ranks(static_cast<std::size_t>(g.ranks()));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

std::string ring_line(const LinkGraph& g) {
  if (g.ranks() < 2) return "  ring: one rank, nothing to exchange\n";
  const std::vector<int> ranks = all_ranks(g);
  const RingSummary r = g.ring(ranks);
  const Path& slow = r.hops[r.slowest_hop];
  return fmt::format(
      "  ring over ranks 0..{}: slowest hop {} -> {} at {:g} GB/s ({}), {:g} GB/s per hop with shared links, "
      "step latency {:g} us\n",
      g.ranks() - 1, slow.src, slow.dst, r.slowest_hop_bw.value(), name(slow.path_class), r.shared_bw.value(),
      to_us(r.step_latency));
}

std::string measurements_table(const ClusterSpec& c) {
  TextTable t({"collective", "size>", "busbw GB/s>", "algbw GB/s>", "1 KiB us>", "env"});
  for (const Measurement& m : c.measurements) {
    t.add({std::string(name(m.collective)), m.size, fmt::format("{:g}", m.busbw_GBps),
           fmt::format("{:g}", m.algbw_GBps), m.time_1KiB_us ? fmt::format("{:g}", *m.time_1KiB_us) : "", m.env});
  }
  return t.render("  ") + fmt::format("  source: {}\n", c.measurements.front().source);
}

std::string intra_node_cell(const ClusterSpec& c) {
  if (c.gpus_per_node() < 2) return "-";
  const Path p = LinkGraph::build(c, 1).path(0, 1);
  return fmt::format("{} {:g}", name(p.path_class), p.bw.value());
}

}  // namespace

std::vector<Path> paths_from_rank0(const LinkGraph& g) {
  std::vector<Path> out;
  for (int r = 1; r < g.gpus_per_node(); ++r) out.push_back(g.path(0, r));
  if (g.nodes() > 1) out.push_back(g.path(0, g.gpus_per_node()));
  return out;
}

std::string format_cluster_list(const std::vector<ClusterSpec>& clusters) {
  TextTable t({"cluster", "GPUs/node>", "GPU", "GPU 0 -> 1, GB/s/dir", "network (per NIC)", "description"});
  for (const ClusterSpec& c : clusters) {
    const std::string net = c.network ? fmt::format("{} x{} {:g} Gb/s", c.network->technology,
                                                    c.node.count(DeviceKind::kNic), *c.network->nic_rate_Gbps.value)
                                      : "- (one node)";
    t.add({c.name, fmt::format("{}", c.gpus_per_node()), c.gpu.name, intra_node_cell(c), net, c.description});
  }
  return t.render();
}

std::string format_cluster(const ClusterSpec& c, const LinkGraph& g) {
  std::string out = fmt::format("{}: {}\n  file: {}\n", c.name, c.description, c.file);
  out += fmt::format("  GPU: {} ({}) x {} per node, {} node{} ({} ranks)\n", c.gpu.name, c.gpu.display_name,
                     c.gpus_per_node(), g.nodes(), g.nodes() == 1 ? "" : "s", g.ranks());
  out += fmt::format("  devices per node: {}\n  transports: {}\n", devices_line(c.node), transports_line(c));
  out += fmt::format("  layout: {}: {}\n", tag_letter(c.layout.tag), c.layout.source);
  if (c.network) {
    out += fmt::format("  network: {}, {:g} Gb/s per NIC ({:g} GB/s per direction; {}: {}), non-blocking\n",
                       c.network->technology, *c.network->nic_rate_Gbps.value, c.network->line_bw().value(),
                       tag_letter(c.network->nic_rate_Gbps.provenance.tag), c.network->nic_rate_Gbps.provenance.source);
    if (const auto& nccl = c.network->nccl_port_GBps) {
      out += fmt::format("  NCCL through one port: {:g} GB/s per direction ({}: {}); the network links take {:g}\n",
                         *nccl->value, tag_letter(nccl->provenance.tag), nccl->provenance.source,
                         c.network->nic_bw().value());
    }
  }
  if (c.system_price_USD && c.system_price_USD->value) {
    out += fmt::format("  system price: {:g} USD ({}: {})\n", *c.system_price_USD->value,
                       tag_letter(c.system_price_USD->provenance.tag), c.system_price_USD->provenance.source);
  }
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict on `"literal" + std::string&&`.
  out += "\n  links of one node:\n";
  out += links_table(c);
  if (g.ranks() > 1) {
    out += "\n  paths from rank 0 (bandwidth of the narrowest link, latency summed over links):\n";
    out += paths_table(g);
  }
  out += "\n";
  out += ring_line(g);
  if (!c.measurements.empty()) {
    out += "\n  measured (tag M, for calibration; the link graph does not use them):\n";
    out += measurements_table(c);
  }
  for (const std::string& n : c.notes) out += fmt::format("  note: {}\n", n);
  return out;
}

nlohmann::ordered_json path_json(const LinkGraph& g, const Path& p) {
  nlohmann::ordered_json out;
  out["src"] = p.src;
  out["dst"] = p.dst;
  out["class"] = name(p.path_class);
  out["nccl_hw_class"] = name(nccl_hw_class(p.path_class));
  out["bw_GBps"] = p.bw.value();
  out["latency_us"] = to_us(p.latency);
  out["route"] = g.describe(p);
  out["links"] = nlohmann::ordered_json::array();
  for (const Hop& h : p.hops) out["links"].push_back(h.link);
  return out;
}

nlohmann::ordered_json cluster_show_json(const ClusterSpec& c, const LinkGraph& g) {
  nlohmann::ordered_json out = cluster_to_json(c);
  nlohmann::ordered_json& derived = out["derived"];
  derived["nodes"] = g.nodes();
  derived["ranks"] = g.ranks();
  derived["paths"] = nlohmann::ordered_json::array();
  for (const Path& p : paths_from_rank0(g)) derived["paths"].push_back(path_json(g, p));
  if (g.ranks() > 1) {
    const RingSummary r = g.ring(all_ranks(g));
    nlohmann::ordered_json& ring = derived["ring"];
    ring["slowest_hop_bw_GBps"] = r.slowest_hop_bw.value();
    ring["slowest_hop"] = path_json(g, r.hops[r.slowest_hop]);
    ring["shared_bw_GBps"] = r.shared_bw.value();
    ring["step_latency_us"] = to_us(r.step_latency);
  }
  return out;
}

nlohmann::ordered_json list_json(const std::vector<GpuSpec>& gpus, const std::vector<ClusterSpec>& clusters) {
  nlohmann::ordered_json out;
  out["schema_version"] = kSchemaVersion;
  out["gpus"] = nlohmann::ordered_json::array();
  for (const GpuSpec& g : gpus) out["gpus"].push_back(gpu_to_json(g));
  out["clusters"] = nlohmann::ordered_json::array();
  for (const ClusterSpec& c : clusters) out["clusters"].push_back(cluster_to_json(c));
  return out;
}

}  // namespace commscale::hw

#include "predict/group_links.hpp"

#include <algorithm>
#include <cmath>

#include "predict/nccl_tables.hpp"

namespace commscale::predict {
namespace {

// The PCIe generation whose x16 figure, scaled to `lanes`, is the link's bandwidth (0 when none is).
int pcie_generation(const hw::Link& link, const hw::ReferenceData& reference) {
  for (const auto& [generation, x16] : reference.pcie_x16_bw) {
    if (!x16.value || link.lanes <= 0) continue;
    const double scaled = x16.value->value() * link.lanes / 16.0;
    if (std::abs(scaled - link.bw.value()) < 1e-6 * scaled) return generation;
  }
  return 0;
}

double nvlink_bw(const hw::Link& link, const hw::ClusterSpec& cluster) {
  const ComputeCapability cc = parse_capability(*cluster.gpu.compute_capability.value);
  const double per_link = nccl_nvlink_bw_GBps(cc.major, cc.minor);
  if (per_link > 0 && link.lanes > 0) return per_link * link.lanes;
  return 0.8 * link.bw.value();
}

double pcie_bw(const hw::Link& link, const hw::ReferenceData& reference) {
  const int generation = pcie_generation(link, reference);
  const double nccl = generation > 0 ? nccl_pcie_bw_GBps(generation, link.lanes) : 0.0;
  return nccl > 0 ? nccl : 0.76 * link.bw.value();
}

std::uint64_t pair_key(int src, int dst) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) | static_cast<std::uint32_t>(dst);
}

}  // namespace

std::vector<double> achievable_link_bw(const hw::LinkGraph& graph, const hw::ClusterSpec& cluster,
                                       const hw::ReferenceData& reference) {
  std::vector<double> out;
  out.reserve(graph.links().size());
  for (const hw::Link& link : graph.links()) {
    switch (link.type) {
      case hw::LinkType::kNvlink:
        out.push_back(nvlink_bw(link, cluster));
        break;
      case hw::LinkType::kPcie:
        out.push_back(pcie_bw(link, reference));
        break;
      default:
        out.push_back(link.bw.value());
        break;
    }
  }
  return out;
}

hw::PathClass GroupLinks::bottleneck_class() const noexcept {
  if (nodes > 1 && inter_bw <= intra_bw) return hw::PathClass::kNetwork;
  return intra_class;
}

LinkAnalyzer::LinkAnalyzer(const hw::LinkGraph& graph, std::vector<double> achievable_bw)
    : graph_(graph),
      achievable_(std::move(achievable_bw)),
      loads_(2 * graph.links().size(), 0.0),
      own_(2 * graph.links().size(), 0.0) {}

const hw::Path& LinkAnalyzer::path(int src, int dst) {
  const std::uint64_t key = pair_key(src, dst);
  auto found = paths_.find(key);
  if (found == paths_.end()) found = paths_.emplace(key, graph_.path(src, dst)).first;
  return found->second;
}

// The ring of one group as NCCL runs it (see the header): intra-node hops, then the rails between nodes.
std::vector<LinkAnalyzer::Load> LinkAnalyzer::group_paths(const std::vector<int>& members) {
  std::vector<int> node_order;
  std::vector<std::vector<int>> local;
  for (const int rank : members) {
    const int node = graph_.node_of(rank);
    auto at = std::find(node_order.begin(), node_order.end(), node);
    if (at == node_order.end()) {
      node_order.push_back(node);
      local.emplace_back();
      at = node_order.end() - 1;
    }
    local[static_cast<std::size_t>(at - node_order.begin())].push_back(rank);
  }
  std::vector<Load> out;
  for (const std::vector<int>& on_node : local) {
    if (on_node.size() < 2) continue;
    for (std::size_t j = 0; j < on_node.size(); ++j) {
      out.push_back({&path(on_node[j], on_node[(j + 1) % on_node.size()]), 1.0, false});
    }
  }
  if (local.size() < 2) return out;
  for (std::size_t i = 0; i < local.size(); ++i) {
    const std::vector<int>& here = local[i];
    const std::vector<int>& next = local[(i + 1) % local.size()];
    const std::size_t rails = std::min(here.size(), next.size());
    for (std::size_t r = 0; r < rails; ++r) {
      out.push_back({&path(here[r], next[r]), 1.0 / static_cast<double>(rails), true});
    }
  }
  return out;
}

void LinkAnalyzer::add_load(const std::vector<Load>& paths, std::vector<double>& loads,
                            std::vector<std::size_t>& touched) const {
  for (const Load& l : paths) {
    for (const hw::Hop& hop : l.path->hops) {
      const std::size_t d = hw::directed_index(hop);
      if (loads[d] == 0.0) touched.push_back(d);
      loads[d] += l.load;
    }
  }
}

// The rate at which a unit of the paths' traffic gets through this path's narrowest share.
double LinkAnalyzer::path_rate(const hw::Path& p, const std::vector<double>& loads, bool nccl_view) const {
  double rate = kUnlimitedGBps;
  for (const hw::Hop& hop : p.hops) {
    if (nccl_view && graph_.link(hop.link).type == hw::LinkType::kSocket) continue;
    const double load = loads[hw::directed_index(hop)];
    rate = std::min(rate, achievable_[hop.link] / std::max(load, 1e-12));
  }
  return p.path_class == hw::PathClass::kHostStaged && !nccl_view ? rate * kHostStagedEfficiency : rate;
}

LinkAnalyzer::Rates LinkAnalyzer::rates(const std::vector<Load>& paths, const std::vector<double>& loads,
                                        bool nccl_view) const {
  Rates r{kUnlimitedGBps, kUnlimitedGBps};
  for (const Load& l : paths) {
    double& rate = l.inter ? r.inter : r.intra;
    rate = std::min(rate, path_rate(*l.path, loads, nccl_view));
  }
  return r;
}

// NCCL's channels per peer for the two ends of a path: 2 x the NVLink links of its narrowest NVLink hop
// when the path is NVLink, else 2 (nccl_tables.hpp).
int LinkAnalyzer::p2p_channels(const hw::Path& p) const {
  if (p.path_class != hw::PathClass::kNvlink) return predict::p2p_channels(false, 0);
  int links = 0;
  for (const hw::Hop& hop : p.hops) {
    const hw::Link& link = graph_.link(hop.link);
    if (link.type == hw::LinkType::kNvlink) links = links == 0 ? link.lanes : std::min(links, link.lanes);
  }
  return predict::p2p_channels(true, links);
}

GroupLinks LinkAnalyzer::summarize(const std::vector<int>& members, const std::vector<Load>& paths,
                                   const std::vector<double>& loads) const {
  GroupLinks g;
  g.ranks = static_cast<int>(members.size());
  std::vector<int> per_node;
  std::vector<int> seen;
  for (const int rank : members) {
    const int node = graph_.node_of(rank);
    const auto at = std::find(seen.begin(), seen.end(), node);
    if (at == seen.end()) {
      seen.push_back(node);
      per_node.push_back(1);
    } else {
      ++per_node[static_cast<std::size_t>(at - seen.begin())];
    }
  }
  g.nodes = static_cast<int>(seen.size());
  g.local = per_node.empty() ? 1 : *std::max_element(per_node.begin(), per_node.end());
  int channels = kMaxChannels;
  for (const Load& l : paths) {
    channels = std::min(channels, p2p_channels(*l.path));
    if (l.inter) {
      g.inter_latency = std::max(g.inter_latency, l.path->latency);
    } else {
      g.intra_latency = std::max(g.intra_latency, l.path->latency);
      g.intra_class = std::max(g.intra_class, l.path->path_class);
      g.intra_nvlink = g.intra_nvlink && l.path->path_class == hw::PathClass::kNvlink;
    }
  }
  if (!paths.empty()) g.p2p_channels = channels;
  const Rates r = rates(paths, loads, false);
  g.intra_bw = GBps(r.intra);
  g.inter_bw = GBps(r.inter);
  return g;
}

std::vector<GroupLinks> LinkAnalyzer::groups(const std::vector<std::vector<int>>& siblings) {
  std::vector<std::vector<Load>> paths;
  paths.reserve(siblings.size());
  for (const std::vector<int>& members : siblings) paths.push_back(group_paths(members));
  std::vector<std::size_t> touched;
  for (const auto& p : paths) add_load(p, loads_, touched);
  std::vector<GroupLinks> out;
  out.reserve(siblings.size());
  for (std::size_t i = 0; i < siblings.size(); ++i) {
    GroupLinks g = summarize(siblings[i], paths[i], loads_);
    std::vector<std::size_t> own_touched;
    add_load(paths[i], own_, own_touched);
    const Rates alone = rates(paths[i], own_, false);
    const Rates nccl = rates(paths[i], own_, true);
    g.alone_bw = GBps(std::min(alone.intra, alone.inter));
    g.nccl_bw = GBps(std::min(nccl.intra, nccl.inter));
    for (const std::size_t d : own_touched) own_[d] = 0.0;
    out.push_back(g);
  }
  for (const std::size_t d : touched) loads_[d] = 0.0;
  return out;
}

std::vector<FlowLinks> LinkAnalyzer::flows(const std::vector<std::pair<int, int>>& flows) {
  std::vector<Load> paths;
  paths.reserve(flows.size());
  for (const auto& [src, dst] : flows) paths.push_back({&path(src, dst), 1.0, false});
  std::vector<std::size_t> touched;
  add_load(paths, loads_, touched);
  std::vector<FlowLinks> out;
  out.reserve(flows.size());
  for (const Load& l : paths) {
    out.push_back({l.path->path_class, GBps(path_rate(*l.path, loads_, false)), l.path->latency, p2p_channels(*l.path)});
  }
  for (const std::size_t d : touched) loads_[d] = 0.0;
  return out;
}

std::vector<FlowLinks> LinkAnalyzer::all_to_all(const std::vector<std::vector<int>>& siblings) {
  std::vector<std::pair<int, int>> pairs;
  std::vector<std::size_t> first;
  for (const std::vector<int>& members : siblings) {
    first.push_back(pairs.size());
    for (const int a : members) {
      for (const int b : members) {
        if (a != b) pairs.emplace_back(a, b);
      }
    }
  }
  first.push_back(pairs.size());
  const std::vector<FlowLinks> each = flows(pairs);
  std::vector<FlowLinks> out;
  for (std::size_t g = 0; g < siblings.size(); ++g) {
    FlowLinks worst;
    worst.p2p_channels = kMaxChannels;
    for (std::size_t i = first[g]; i < first[g + 1]; ++i) {
      worst.bw = std::min(worst.bw, each[i].bw);
      worst.latency = std::max(worst.latency, each[i].latency);
      worst.path_class = std::max(worst.path_class, each[i].path_class);
      worst.p2p_channels = std::min(worst.p2p_channels, each[i].p2p_channels);
    }
    out.push_back(worst);
  }
  return out;
}

}  // namespace commscale::predict

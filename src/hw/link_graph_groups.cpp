// Rings and trees over groups of ranks: the slowest hop, the bandwidth left when the hops that run at
// once share links, and the latency of a step.

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/link_graph.hpp"

namespace commscale::hw {
namespace {

// The bandwidth each of `paths` gets when all run at once: a directed link crossed by k of them gives
// each bw / k; each path gets its narrowest share, and the result is the smallest over the paths.
GBps shared_bandwidth(const LinkGraph& g, const std::vector<Path>& paths) {
  std::map<std::size_t, int> crossings;
  for (const Path& p : paths) {
    for (const Hop& hop : p.hops) ++crossings[directed_index(hop)];
  }
  double shared = 1e300;
  for (const Path& p : paths) {
    for (const Hop& hop : p.hops)
      shared = std::min(shared, g.link(hop.link).bw.value() / crossings[directed_index(hop)]);
  }
  return GBps(shared);
}

}  // namespace

void LinkGraph::check_group(std::span<const int> group) const {
  if (group.size() < 2) throw InputError("group", fmt::format("{} rank", group.size()), "at least 2 ranks");
  std::set<int> seen;
  for (const int rank : group) {
    if (rank < 0 || rank >= ranks()) {
      throw InputError("group", fmt::format("{} is not a rank of {} ranks", rank, ranks()),
                       fmt::format("0 to {}", ranks() - 1));
    }
    if (!seen.insert(rank).second)
      throw InputError("group", fmt::format("rank {} appears twice", rank), "distinct ranks");
  }
}

RingSummary LinkGraph::ring(std::span<const int> group) const {
  check_group(group);
  RingSummary r;
  for (std::size_t i = 0; i < group.size(); ++i) {
    r.hops.push_back(path(group[i], group[(i + 1) % group.size()]));
    const Path& hop = r.hops.back();
    ++r.hops_by_class[static_cast<std::size_t>(hop.path_class)];
    if (i == 0 || hop.bw < r.hops[r.slowest_hop].bw) r.slowest_hop = i;
    r.step_latency = std::max(r.step_latency, hop.latency);
  }
  r.slowest_hop_bw = r.hops[r.slowest_hop].bw;
  r.shared_bw = shared_bandwidth(*this, r.hops);
  return r;
}

TreeSummary LinkGraph::tree(std::span<const int> group) const {
  check_group(group);
  TreeSummary t;
  std::vector<Seconds> latency_to(group.size());
  std::vector<int> depth(group.size(), 0);
  double slowest = 1e300;
  for (std::size_t i = 1; i < group.size(); ++i) {
    const std::size_t parent = (i - 1) / 2;
    t.down.push_back(path(group[parent], group[i]));
    t.up.push_back(path(group[i], group[parent]));
    slowest = std::min({slowest, t.down.back().bw.value(), t.up.back().bw.value()});
    latency_to[i] = latency_to[parent] + t.down.back().latency;
    depth[i] = depth[parent] + 1;
    t.depth = std::max(t.depth, depth[i]);
    t.root_to_leaf_latency = std::max(t.root_to_leaf_latency, latency_to[i]);
  }
  t.slowest_edge_bw = GBps(slowest);
  t.shared_bw = std::min(shared_bandwidth(*this, t.down), shared_bandwidth(*this, t.up));
  return t;
}

}  // namespace commscale::hw

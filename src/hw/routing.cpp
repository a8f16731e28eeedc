#include "hw/routing.hpp"

#include <algorithm>
#include <deque>

namespace commscale::hw {
namespace {

struct Candidate {
  std::vector<Hop> hops;
  int gpu_intermediates = 0;
  double bottleneck = 0.0;
};

// Ranks candidates: fewer intermediate GPUs, then wider, then shorter.
bool better(const Candidate& x, const Candidate& best) {
  if (x.gpu_intermediates != best.gpu_intermediates) return x.gpu_intermediates < best.gpu_intermediates;
  if (x.bottleneck != best.bottleneck) return x.bottleneck > best.bottleneck;
  return x.hops.size() < best.hops.size();
}

class Search {
 public:
  Search(const LinkGraph& graph, DeviceId to, const RouteRule& rule)
      : graph_(graph), to_(to), rule_(rule), visited_(graph.devices().size(), false) {}

  std::optional<Candidate> run(DeviceId from) {
    visited_[from] = true;
    Candidate current;
    current.bottleneck = 1e300;
    extend(from, current);
    return best_;
  }

 private:
  void extend(DeviceId at, Candidate& current) {
    if (at == to_) {
      if (!best_ || better(current, *best_)) best_ = current;
      return;
    }
    if (static_cast<int>(current.hops.size()) >= rule_.max_hops) return;
    for (const LinkId id : graph_.links_of(at)) {
      const Link& link = graph_.link(id);
      if (!rule_.link_types[static_cast<std::size_t>(link.type)] || link.a == link.b) continue;
      const Hop hop{id, link.a == at ? Direction::kAtoB : Direction::kBtoA};
      const DeviceId next = hop_end(graph_, hop);
      if (visited_[next] || !may_enter(next, current)) continue;
      visit(next, hop, link, current);
    }
  }

  bool may_enter(DeviceId next, const Candidate& current) const {
    if (next == to_) return true;
    const DeviceKind kind = graph_.device(next).kind;
    if (!rule_.through[static_cast<std::size_t>(kind)]) return false;
    return kind != DeviceKind::kGpu || current.gpu_intermediates < rule_.max_gpu_intermediates;
  }

  void visit(DeviceId next, Hop hop, const Link& link, Candidate& current) {
    const Candidate saved = current;
    current.hops.push_back(hop);
    current.bottleneck = std::min(current.bottleneck, link.bw.value());
    if (next != to_ && graph_.device(next).kind == DeviceKind::kGpu) ++current.gpu_intermediates;
    visited_[next] = true;
    extend(next, current);
    visited_[next] = false;
    current = saved;
  }

  const LinkGraph& graph_;
  DeviceId to_;
  const RouteRule& rule_;
  std::vector<bool> visited_;
  std::optional<Candidate> best_;
};

}  // namespace

DeviceId hop_end(const LinkGraph& graph, Hop hop) {
  const Link& link = graph.link(hop.link);
  return hop.direction == Direction::kAtoB ? link.b : link.a;
}

DeviceId hop_start(const LinkGraph& graph, Hop hop) {
  const Link& link = graph.link(hop.link);
  return hop.direction == Direction::kAtoB ? link.a : link.b;
}

std::optional<std::vector<Hop>> find_route(const LinkGraph& graph, DeviceId from, DeviceId to, const RouteRule& rule) {
  if (from == to) return std::vector<Hop>{};
  Search search(graph, to, rule);
  std::optional<Candidate> best = search.run(from);
  if (!best) return std::nullopt;
  return std::move(best->hops);
}

std::vector<DeviceId> nearest(const LinkGraph& graph, DeviceId from, DeviceKind kind, const RouteRule& rule) {
  // Breadth-first, level by level, so that every device at the smallest distance is found.
  std::vector<int> distance(graph.devices().size(), -1);
  std::deque<DeviceId> queue = {from};
  distance[from] = 0;
  std::vector<DeviceId> found;
  int found_at = -1;
  while (!queue.empty()) {
    const DeviceId at = queue.front();
    queue.pop_front();
    if (found_at >= 0 && distance[at] > found_at) break;
    if (at != from && graph.device(at).kind == kind) {
      found.push_back(at);
      found_at = distance[at];
      continue;
    }
    if (at != from && !rule.through[static_cast<std::size_t>(graph.device(at).kind)]) continue;
    if (distance[at] >= rule.max_hops) continue;
    for (const LinkId id : graph.links_of(at)) {
      const Link& link = graph.link(id);
      if (!rule.link_types[static_cast<std::size_t>(link.type)] || link.a == link.b) continue;
      const DeviceId next = link.a == at ? link.b : link.a;
      if (distance[next] >= 0) continue;
      distance[next] = distance[at] + 1;
      queue.push_back(next);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace commscale::hw

#include "runtime/step_engine.hpp"

#include <algorithm>
#include <set>

namespace commscale {

std::vector<bool> cross_stream_dependencies(const std::vector<Op>& ops) {
  std::vector<bool> needed(ops.size(), false);
  for (const Op& op : ops) {
    for (OpId d : op.deps) {
      if (ops.at(d).stream != op.stream) needed[d] = true;
    }
  }
  return needed;
}

std::vector<P2pLink> p2p_links(const ProgramSet& set) {
  std::set<P2pLink> links;
  for (int r = 0; r < set.world_size; ++r) {
    const RankProgram& rp = set.ranks.at(static_cast<std::size_t>(r));
    for (const Op& op : ops_of(set, r)) {
      const auto* p = std::get_if<PointToPoint>(&op.payload);
      if (p == nullptr || p->direction != P2pDirection::kSend) continue;
      links.insert(P2pLink{p->group, r, world_peer(rp, *p)});
    }
  }
  return {links.begin(), links.end()};
}

int collective_group_color(const ProgramSet& set, int rank, std::uint32_t handle) {
  const RankProgram& rp = set.ranks.at(static_cast<std::size_t>(rank));
  if (handle >= rp.groups.size()) return -1;
  const auto& ops = ops_of(set, rank);
  const bool used = std::any_of(ops.begin(), ops.end(), [&](const Op& op) {
    const auto* c = std::get_if<CollectiveOp>(&op.payload);
    return c != nullptr && c->group == handle;
  });
  if (!used) return -1;
  const std::vector<int>& members = rp.groups[handle].members;
  return *std::min_element(members.begin(), members.end());
}

}  // namespace commscale

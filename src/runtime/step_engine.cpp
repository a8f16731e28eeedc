#include "runtime/step_engine.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/size.hpp"
#include "runtime/control_plane.hpp"

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

std::vector<HostUpdate> host_updates(const std::vector<Op>& ops) {
  std::vector<HostUpdate> updates;
  std::uint64_t first = 0;
  for (const Op& op : ops) {
    const auto* k = std::get_if<MemoryKernel>(&op.payload);
    if (k == nullptr || k->kind != MemoryKernelKind::kHostOptimizer) continue;
    const std::uint64_t width = k->elements == 0 ? 0 : k->bytes_read.count() / k->elements;
    // A shard too small to hold a whole element of each parameter updates what it holds.
    const std::uint64_t count = width == 0 ? 0 : std::min(k->elements, k->bytes_written.count() / width);
    updates.push_back(HostUpdate{op.id, first, count, static_cast<std::size_t>(width), 0});
    first += count;
  }
  return updates;
}

std::uint64_t host_parameters(const std::vector<HostUpdate>& updates) noexcept {
  return updates.empty() ? 0 : updates.back().first + updates.back().count;
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

P2pLink link_of(const RankProgram& rank, const PointToPoint& p2p) {
  const int peer = world_peer(rank, p2p);
  const bool send = p2p.direction == P2pDirection::kSend;
  return P2pLink{p2p.group, send ? rank.rank : peer, send ? peer : rank.rank};
}

std::string describe_transfer(const RankProgram& rank, const Op& op, const PointToPoint& p2p) {
  const Group& group = rank.groups.at(p2p.group);
  const bool send = p2p.direction == P2pDirection::kSend;
  // Pipeline groups list their ranks by stage.
  const bool pipeline = is_pipeline(group.role);
  std::string text = fmt::format("{} of {} {} rank {} ({} {}) on group {} (ranks {})", name(p2p.direction),
                                 format_size(p2p.bytes), send ? "to" : "from", world_peer(rank, p2p),
                                 pipeline ? "stage" : "member", p2p.peer, name(group.role), rank_list(group.members));
  if (op.microbatch >= 0) text += fmt::format(", microbatch {}", op.microbatch);
  return text;
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

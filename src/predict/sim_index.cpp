#include "predict/sim_index.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale::predict {
namespace {

ProgramIndex index_program(const std::vector<Op>& ops) {
  ProgramIndex index;
  index.dependents_begin.assign(ops.size() + 1, 0);
  for (const Op& op : ops) {
    index.streams[static_cast<std::size_t>(op.stream)].push_back(op.id);
    for (const OpId d : op.deps) ++index.dependents_begin.at(d + 1);
  }
  for (std::size_t j = 0; j < ops.size(); ++j) index.dependents_begin[j + 1] += index.dependents_begin[j];
  index.dependents.resize(index.dependents_begin.back());
  std::vector<std::uint32_t> fill(index.dependents_begin.begin(), index.dependents_begin.end() - 1);
  for (const Op& op : ops) {
    for (const OpId d : op.deps) index.dependents[fill[d]++] = op.id;
  }
  return index;
}

}  // namespace

SimIndex::SimIndex(const ProgramSet& set, const Simulation& sim) : set_(set), sim_(sim) {
  for (const int rank : sim.simulated) {
    const int p = set.ranks.at(static_cast<std::size_t>(rank)).program;
    if (!programs_.contains(p)) programs_.emplace(p, index_program(set.programs.at(static_cast<std::size_t>(p))));
  }
}

const ProgramIndex& SimIndex::program(int sim_rank) const {
  const int rank = sim_.simulated[static_cast<std::size_t>(sim_rank)];
  return programs_.at(set_.ranks[static_cast<std::size_t>(rank)].program);
}

// The handle under which `world_rank` knows `group` (the builder uses the same handle on every
// member; a hand-written set need not).
std::uint32_t SimIndex::handle_on(int world_rank, const Group& group) const {
  const auto& groups = set_.ranks.at(static_cast<std::size_t>(world_rank)).groups;
  for (std::size_t h = 0; h < groups.size(); ++h) {
    if (groups[h].name == group.name && groups[h].members == group.members) return static_cast<std::uint32_t>(h);
  }
  throw RuntimeFailure(fmt::format("rank {} is in group '{}' but does not list it", world_rank, group.name));
}

const std::vector<Participant>& SimIndex::members(int sim_rank, std::uint32_t handle) {
  const std::uint64_t key = (static_cast<std::uint64_t>(sim_rank) << 32) | handle;
  const auto found = members_.find(key);
  if (found != members_.end()) return found->second;
  const int rank = sim_.simulated[static_cast<std::size_t>(sim_rank)];
  const Group& group = set_.ranks[static_cast<std::size_t>(rank)].groups.at(handle);
  std::vector<Participant> out;
  for (const int m : group.members) {
    const int stand_in = sim_.stand_in.at(static_cast<std::size_t>(m));
    // Members of one class share their handle for the group: one member per class is enough.
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Participant& p) { return p.sim == stand_in; });
    if (!seen) out.push_back({stand_in, handle_on(m, group), 0});
  }
  return members_.emplace(key, std::move(out)).first->second;
}

Participant SimIndex::counterpart(int sim_rank, std::uint32_t handle, int peer) {
  const std::uint64_t key = (static_cast<std::uint64_t>(sim_rank) << 32) | (static_cast<std::uint64_t>(handle) << 20) |
                            static_cast<std::uint32_t>(peer);
  const auto found = counterparts_.find(key);
  if (found != counterparts_.end()) return found->second;
  const int rank = sim_.simulated[static_cast<std::size_t>(sim_rank)];
  const Group& group = set_.ranks[static_cast<std::size_t>(rank)].groups.at(handle);
  const int other = group.members.at(static_cast<std::size_t>(peer));
  const auto self = std::find(group.members.begin(), group.members.end(), rank);
  const Participant p{sim_.stand_in.at(static_cast<std::size_t>(other)), handle_on(other, group),
                      static_cast<int>(self - group.members.begin())};
  return counterparts_.emplace(key, p).first->second;
}

}  // namespace commscale::predict

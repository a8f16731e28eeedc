#include "predict/sim_index.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale::predict {
ProgramIndex index_program(const std::vector<Op>& ops) {
  ProgramIndex index;
  index.dependents_begin.assign(ops.size() + 1, 0);
  index.deps_begin.reserve(ops.size() + 1);
  index.info.reserve(ops.size());
  // Sized first: a search indexes thousands of programs, and growing the lists was half of this.
  std::array<std::size_t, kStreamCount> per_stream{};
  std::size_t deps = 0;
  for (const Op& op : ops) {
    ++per_stream[static_cast<std::size_t>(op.stream)];
    deps += op.deps.size();
  }
  for (std::size_t s = 0; s < kStreamCount; ++s) index.streams[s].reserve(per_stream[s]);
  index.deps.reserve(deps);
  for (const Op& op : ops) {
    index.deps_begin.push_back(static_cast<std::uint32_t>(index.deps.size()));
    index.deps.insert(index.deps.end(), op.deps.begin(), op.deps.end());
    OpInfo info{.stream = op.stream,
                .host_phase = host_phase(op.phase, op.payload),
                .host_class = host_op_class(op.payload),
                .host_continued = continues_attention_kernel(op.payload)};
    if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
      info.category = OpCategory::kCollective;
      info.group = c->group;
    } else if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
      info.category = p->direction == P2pDirection::kSend ? OpCategory::kSend : OpCategory::kRecv;
      info.group = p->group;
      info.peer = p->peer;
    } else if (std::holds_alternative<HostCopy>(op.payload)) {
      info.category = OpCategory::kHostCopy;
    }
    index.info.push_back(info);
    index.streams[static_cast<std::size_t>(op.stream)].push_back(op.id);
    for (const OpId d : op.deps) ++index.dependents_begin.at(d + 1);
  }
  index.deps_begin.push_back(static_cast<std::uint32_t>(index.deps.size()));
  for (std::size_t j = 0; j < ops.size(); ++j) index.dependents_begin[j + 1] += index.dependents_begin[j];
  index.dependents.resize(index.dependents_begin.back());
  std::vector<std::uint32_t> fill(index.dependents_begin.begin(), index.dependents_begin.end() - 1);
  for (const Op& op : ops) {
    for (const OpId d : op.deps) index.dependents[fill[d]++] = op.id;
  }
  return index;
}

std::vector<ProgramIndex> index_programs(const ProgramSet& set) {
  std::vector<ProgramIndex> out;
  out.reserve(set.programs.size());
  for (const std::vector<Op>& ops : set.programs) out.push_back(index_program(ops));
  return out;
}

SimIndex::SimIndex(const ProgramSet& set, const Simulation& sim, const std::vector<ProgramIndex>* indexes)
    : set_(set), sim_(sim), programs_(indexes) {
  if (programs_ == nullptr) {
    // Only the programs of simulated ranks; the others stay empty.
    own_.resize(set.programs.size());
    std::vector<bool> built(set.programs.size(), false);
    for (const int rank : sim.simulated) {
      const auto p = static_cast<std::size_t>(set.ranks.at(static_cast<std::size_t>(rank)).program);
      if (!built.at(p)) own_[p] = index_program(set.programs[p]);
      built[p] = true;
    }
    programs_ = &own_;
  } else if (programs_->size() != set.programs.size()) {
    throw RuntimeFailure(fmt::format("simulation given {} program indexes for {} programs", programs_->size(),
                                     set.programs.size()));
  }
  const std::size_t n = sim.simulated.size();
  members_.resize(n);
  members_known_.resize(n);
  counterparts_.resize(n);
  counterparts_known_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t groups = set.ranks.at(static_cast<std::size_t>(sim.simulated[i])).groups.size();
    members_[i].resize(groups);
    members_known_[i].assign(groups, 0);
    counterparts_[i].resize(groups);
    counterparts_known_[i].resize(groups);
  }
}

const ProgramIndex& SimIndex::program(int sim_rank) const {
  const int rank = sim_.simulated[static_cast<std::size_t>(sim_rank)];
  return (*programs_)[static_cast<std::size_t>(set_.ranks[static_cast<std::size_t>(rank)].program)];
}

// The handle under which `world_rank` knows `group` (the builder uses the same handle on every
// member; a hand-written set need not).
std::uint32_t SimIndex::handle_on(int world_rank, const Group& group) const {
  const auto& groups = set_.ranks.at(static_cast<std::size_t>(world_rank)).groups;
  for (std::size_t h = 0; h < groups.size(); ++h) {
    if (groups[h].role == group.role && groups[h].members == group.members) return static_cast<std::uint32_t>(h);
  }
  throw RuntimeFailure(fmt::format("rank {} is in group '{}' but does not list it", world_rank, name(group.role)));
}

const std::vector<Participant>& SimIndex::members(int sim_rank, std::uint32_t handle) {
  const auto i = static_cast<std::size_t>(sim_rank);
  std::vector<Participant>& out = members_[i].at(handle);
  if (members_known_[i][handle] != 0) return out;
  members_known_[i][handle] = 1;
  const int rank = sim_.simulated[i];
  const Group& group = set_.ranks[static_cast<std::size_t>(rank)].groups.at(handle);
  for (const int m : group.members) {
    const int stand_in = sim_.stand_in.at(static_cast<std::size_t>(m));
    // Members of one class share their handle for the group: one member per class is enough.
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Participant& p) { return p.sim == stand_in; });
    if (!seen) out.push_back({stand_in, handle_on(m, group), 0});
  }
  return out;
}

Participant SimIndex::counterpart(int sim_rank, std::uint32_t handle, int peer) {
  const auto i = static_cast<std::size_t>(sim_rank);
  const int rank = sim_.simulated[i];
  const Group& group = set_.ranks[static_cast<std::size_t>(rank)].groups.at(handle);
  auto& known = counterparts_known_[i][handle];
  auto& cached = counterparts_[i][handle];
  const auto slot = static_cast<std::size_t>(peer);
  if (known.size() <= slot) {
    known.resize(group.members.size(), 0);
    cached.resize(group.members.size());
  }
  if (known.at(slot) != 0) return cached[slot];
  const int other = group.members.at(slot);
  const auto self = std::find(group.members.begin(), group.members.end(), rank);
  const Participant p{sim_.stand_in.at(static_cast<std::size_t>(other)), handle_on(other, group),
                      static_cast<int>(self - group.members.begin())};
  known[slot] = 1;
  cached[slot] = p;
  return p;
}

}  // namespace commscale::predict

#include "program/checker_index.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace commscale::check {

Index build_index(const ProgramSet& set) {
  Index index;
  std::map<std::pair<GroupRole, std::vector<int>>, int> ids;
  index.rank_comms.resize(set.ranks.size());
  for (const RankProgram& rank : set.ranks) {
    for (const Group& g : rank.groups) {
      const auto [it, added] = ids.try_emplace({g.role, g.members}, static_cast<int>(index.comms.size()));
      if (added) index.comms.push_back({g.role, g.members});
      index.rank_comms[static_cast<std::size_t>(rank.rank)].push_back(it->second);
    }
  }
  index.collectives.resize(set.programs.size());
  index.p2p.resize(set.programs.size());
  for (std::size_t p = 0; p < set.programs.size(); ++p) {
    for (const Op& op : set.programs[p]) {
      if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
        index.collectives[p][{c->group, op.stream}].push_back(op.id);
      } else if (const auto* x = std::get_if<PointToPoint>(&op.payload)) {
        index.p2p[p][{x->group, x->peer, x->direction}].push_back(op.id);
      }
    }
  }
  return index;
}

int handle_of(const Index& index, int rank, int comm) {
  const std::vector<int>& comms = index.rank_comms.at(static_cast<std::size_t>(rank));
  const auto it = std::find(comms.begin(), comms.end(), comm);
  return it == comms.end() ? -1 : static_cast<int>(it - comms.begin());
}

int member_index(const Comm& comm, int rank) {
  const auto it = std::find(comm.members.begin(), comm.members.end(), rank);
  return it == comm.members.end() ? -1 : static_cast<int>(it - comm.members.begin());
}

std::string describe(const ProgramSet& set, int rank, OpId op) {
  const Op& o = ops_of(set, rank).at(op);
  return fmt::format("rank {} op {} '{}' ({})", rank, op, o.name, name(o.stream));
}

std::string describe(const Comm& comm) {
  constexpr std::size_t kShown = 8;
  std::string members;
  for (std::size_t i = 0; i < comm.members.size(); ++i) {
    if (comm.members.size() > 2 * kShown && i == kShown) {
      members += fmt::format(", ... ({} more)", comm.members.size() - 2 * kShown);
      i = comm.members.size() - kShown;
    }
    members += fmt::format("{}{}", members.empty() ? "" : ", ", comm.members[i]);
  }
  return fmt::format("'{}' [{}]", name(comm.role), members);
}

}  // namespace commscale::check

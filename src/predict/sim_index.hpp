#pragma once

// Internal to the simulator: per program, each stream's ops in order and each op's dependents; per
// simulated rank and group, the simulated ranks (and their handles) whose calls a call is matched with.

#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "predict/simulator.hpp"

namespace commscale::predict {

struct ProgramIndex {
  std::array<std::vector<OpId>, kStreamCount> streams;  // op ids of each stream, in program order
  // The ops that list op j in their deps: dependents[dependents_begin[j] .. dependents_begin[j + 1]).
  std::vector<std::uint32_t> dependents_begin;
  std::vector<OpId> dependents;
};

// A call's counterpart: the simulated rank standing in for a group member, the handle that member
// uses for the group, and (for point-to-point) the peer index under which it sees this rank.
struct Participant {
  int sim = 0;
  std::uint32_t handle = 0;
  int peer = 0;
};

class SimIndex {
 public:
  SimIndex(const ProgramSet& set, const Simulation& sim);

  [[nodiscard]] const ProgramIndex& program(int sim_rank) const;
  // The members of the group, as (stand-in, its handle), each pair once.
  [[nodiscard]] const std::vector<Participant>& members(int sim_rank, std::uint32_t handle);
  // The other side of a point-to-point call to or from peer `peer` of the group.
  [[nodiscard]] Participant counterpart(int sim_rank, std::uint32_t handle, int peer);

 private:
  [[nodiscard]] std::uint32_t handle_on(int world_rank, const Group& group) const;

  const ProgramSet& set_;
  const Simulation& sim_;
  std::map<int, ProgramIndex> programs_;  // by program index
  std::unordered_map<std::uint64_t, std::vector<Participant>> members_;
  std::unordered_map<std::uint64_t, Participant> counterparts_;
};

}  // namespace commscale::predict

#pragma once

// Internal to the simulator: per program, each stream's ops in order and each op's dependents; per
// simulated rank and group, the simulated ranks (and their handles) whose calls a call is matched with.

#include <array>
#include <cstdint>
#include <vector>

#include "predict/program_index.hpp"
#include "predict/simulator.hpp"

namespace commscale::predict {

// A call's counterpart: the simulated rank standing in for a group member, the handle that member
// uses for the group, and (for point-to-point) the peer index under which it sees this rank.
struct Participant {
  int sim = 0;
  std::uint32_t handle = 0;
  int peer = 0;
};

class SimIndex {
 public:
  // `indexes`: index_programs(set), if the caller keeps them; null: built here.
  SimIndex(const ProgramSet& set, const Simulation& sim, const std::vector<ProgramIndex>* indexes);

  [[nodiscard]] const ProgramIndex& program(int sim_rank) const;
  // The members of the group, as (stand-in, its handle), each pair once.
  [[nodiscard]] const std::vector<Participant>& members(int sim_rank, std::uint32_t handle);
  // The other side of a point-to-point call to or from peer `peer` of the group.
  [[nodiscard]] Participant counterpart(int sim_rank, std::uint32_t handle, int peer);

 private:
  [[nodiscard]] std::uint32_t handle_on(int world_rank, const Group& group) const;

  const ProgramSet& set_;
  const Simulation& sim_;
  std::vector<ProgramIndex> own_;                 // by program index: those of simulated ranks, if built here
  const std::vector<ProgramIndex>* programs_;    // own_ or the caller's
  // By simulated rank and handle (and peer), looked up once: members, and whether they are known yet.
  std::vector<std::vector<std::vector<Participant>>> members_;
  std::vector<std::vector<std::uint8_t>> members_known_;
  std::vector<std::vector<std::vector<Participant>>> counterparts_;
  std::vector<std::vector<std::vector<std::uint8_t>>> counterparts_known_;
};

}  // namespace commscale::predict

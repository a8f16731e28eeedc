#pragma once

// The simulator's index of an op list: each stream's ops in order and each op's dependents. It depends
// on the op list alone, so a caller that simulates one program set many times (the stage model: one
// coarse program, several cost sets) builds it once (index_programs) and hands it to simulate()
// through SimulationOptions::indexes.

#include <array>
#include <cstdint>
#include <vector>

#include "program/host_costs.hpp"
#include "program/op.hpp"

namespace commscale::predict {

// What the simulator matches an op by: a compute op (Gemm or MemoryKernel) and a host copy are not
// matched; a collective by its group handle; a send or receive by its group handle and peer.
enum class OpCategory : std::uint8_t { kCompute, kCollective, kSend, kRecv, kHostCopy };
struct OpInfo {
  Stream stream = Stream::kCompute;
  OpCategory category = OpCategory::kCompute;
  HostPhase host_phase = HostPhase::kForward;  // what the host's issue cost is looked up by (host_costs.hpp)
  HostOpClass host_class : 7 = HostOpClass::kGemm;
  bool host_continued : 1 = false;  // a later product of a fused attention kernel (Gemm::flash_continued)
  std::uint32_t group = 0;  // a communication op's handle
  int peer = 0;             // a send's or receive's peer within the group
  [[nodiscard]] bool compute() const noexcept { return category == OpCategory::kCompute; }
  // Runs on its own: when its stream and dependencies let it, for its duration (no peer to wait for).
  [[nodiscard]] bool local() const noexcept { return compute() || category == OpCategory::kHostCopy; }
};

struct ProgramIndex {
  std::array<std::vector<OpId>, kStreamCount> streams;  // op ids of each stream, in program order
  // The ops that list op j in their deps: dependents[dependents_begin[j] .. dependents_begin[j + 1]).
  std::vector<std::uint32_t> dependents_begin;
  std::vector<OpId> dependents;
  // Op j's deps, in order: deps[deps_begin[j] .. deps_begin[j + 1]) (packed, so that the simulation's
  // inner loop reads no Op), and what the simulation and a breakdown need of the op itself (an Op
  // spans three cache lines, and the loads of its payload were a fifth of a search's simulation).
  std::vector<std::uint32_t> deps_begin;
  std::vector<OpId> deps;
  std::vector<OpInfo> info;
};

[[nodiscard]] ProgramIndex index_program(const std::vector<Op>& ops);
// One index per op list of the set, by program index (ProgramSet::programs).
[[nodiscard]] std::vector<ProgramIndex> index_programs(const ProgramSet& set);

}  // namespace commscale::predict

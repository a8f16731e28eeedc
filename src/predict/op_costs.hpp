#pragma once

// The cost models applied to a step program on a target: the duration of every op of every rank, and
// the cost signature the simulator's symmetry reduction starts from.
//
// Compute ops cost what the compute model says (the same for every rank: one GPU model per cluster).
// A collective costs what the collective model says for its group's links, analysed with every other
// group of the same name as siblings (all "tp" groups run their collectives at once, say). A transfer
// costs the point-to-point model on its path, analysed with every transfer of the same group name.

#include <map>
#include <tuple>
#include <vector>

#include "predict/comm_model.hpp"
#include "predict/group_links.hpp"
#include "predict/interference.hpp"
#include "predict/simulator.hpp"
#include "predict/target.hpp"

namespace commscale::predict {

class ProgramCosts final : public OpCosts, public InterferenceCosts {
 public:
  ProgramCosts(const ProgramSet& set, const Target& target, LinkAnalyzer& analyzer);
  // A set whose ranks stand for larger groups (a unit's ops alone, one rank for its tensor-parallel group:
  // parallel/program_builder.hpp, unit_program): a collective on handle h takes links[h]; no transfers.
  // Throws std::logic_error where a collective's handle has no links, or the set has a transfer or an
  // all-to-all (whose time needs the real group's pairs).
  ProgramCosts(const ProgramSet& set, const Target& target, std::vector<GroupLinks> links);

  [[nodiscard]] Seconds duration(int rank, const Op& op) const override;
  // The latency term of a communication op's duration (CommEstimate::latency): 0 for a compute op, and
  // for a collective timed by a calibration curve (a measured curve has no separate latency term).
  [[nodiscard]] Seconds latency(int rank, const Op& op) const;
  [[nodiscard]] std::uint64_t signature(int rank) const override;
  // The load a communication op puts on its GPU: its path's NCCL channels, and the bus bandwidth it
  // achieves (its size over its duration, as bench defines busbw).
  [[nodiscard]] InterferenceModel::Load comm_load(int rank, const Op& op) const override;
  [[nodiscard]] double gemm_share(int rank, const Op& op) const override;

  // The links of a collective group, or null when no collective runs on it.
  [[nodiscard]] const GroupLinks* group_links(int rank, std::uint32_t handle) const;
  // The slowest collective group and transfer of each group name, for reports.
  [[nodiscard]] const std::map<std::string, GroupLinks>& slowest_groups() const noexcept { return slowest_groups_; }
  // Transfers by the name the breakdown charges them to (program/op.hpp, charged_name: "pp").
  [[nodiscard]] const std::map<std::string, FlowLinks>& slowest_flows() const noexcept { return slowest_flows_; }

 private:
  void analyze_groups(LinkAnalyzer& analyzer);
  void analyze_flows(LinkAnalyzer& analyzer);
  void make_signatures();
  // The comm model's estimate for a collective or a transfer, computed once per (links, kind, bytes).
  [[nodiscard]] const CommEstimate& comm_estimate(int rank, const Op& op) const;

  const ProgramSet& set_;
  const Target& target_;
  std::vector<std::vector<int>> group_of_;  // [rank][handle] -> index into links_, -1 without collectives
  std::vector<GroupLinks> links_;
  std::vector<FlowLinks> all_to_all_;                                // by index into links_
  std::map<std::tuple<int, std::uint32_t, int, int>, int> flow_of_;  // (rank, handle, peer, send?) -> flows_
  std::vector<FlowLinks> flows_;
  std::vector<int> links_value_;  // index into links_ -> id of its value (equal links, equal id)
  std::vector<int> flows_value_;
  std::vector<std::uint64_t> signatures_;
  std::map<std::string, GroupLinks> slowest_groups_;
  std::map<std::string, FlowLinks> slowest_flows_;
  mutable std::vector<std::vector<double>> compute_;                    // [program][op], NaN until asked
  mutable std::map<std::tuple<int, int, std::uint64_t>, CommEstimate> comm_;  // (value id, kind, bytes); kind -1: p2p
};

}  // namespace commscale::predict

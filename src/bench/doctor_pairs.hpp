#pragma once

// Doctor's pair rounds (predict/doctor_rounds.hpp): ceil(log2 N) rounds of disjoint pairs of units
// (nodes, or ranks on a one-node job), each pair timed one way and then the other with a two-rank
// broadcast from the sender (bench's checked sweep, all pairs at once). On nodes every rank pairs
// with the rank of the same local rank on the partner node, so every rail (a GPU and its NIC) is
// timed; a unit is then a rank, and blame that falls on every rank of a node falls on the node.

#include <map>
#include <string>
#include <vector>

#include "bench/doctor_comm.hpp"

namespace commscale {

struct PairPlan {
  std::string units;  // "nodes", "ranks" or "none"
  int unit_count = 0;
  int rounds = 0;
  std::string why_none;  // when units is "none"
};

[[nodiscard]] PairPlan plan_pairs(PairUnits asked, const JobLayout& job);

struct PairRoundsResult {
  std::vector<predict::PairSample> samples;  // units are world ranks
  std::vector<std::string> basis;            // by sample: where its absolute expectation comes from
  std::vector<double> round_seconds;         // wall time of each round (both directions), rank 0
  std::uint64_t wrong = 0;
};

// Every rank runs the rounds; rank 0 gets the samples, with expectations from `expect` (null on the
// other ranks).
[[nodiscard]] PairRoundsResult run_pair_rounds(const PairPlan& plan, const JobLayout& job, Bytes size,
                                               const DoctorOptions& options, Backend& backend, Communicator& world_comm,
                                               const MpiComm& world, const predict::DoctorExpectations* expect);

// Rank 0: a check per transfer and the suspects. `nearest_nic` maps a GPU's PCI bus id to the NIC
// nearest it (node phase), for naming.
void judge_pair_rounds(const PairPlan& plan, const PairRoundsResult& r, const JobLayout& job, Bytes size,
                       double min_ratio, const std::map<std::string, std::string>& nearest_nic,
                       std::vector<predict::DoctorCheck>* checks, std::vector<predict::Suspect>* suspects);

}  // namespace commscale

#pragma once

// Doctor's collectives: `bench`'s checked sweep (bench/sweep.hpp) of one collective and size over
// groups that run at once (each node; the whole job; the pairs of one round), each rank's loop time
// kept so that every group gets its own bandwidth. Rank 0 turns the times into checks against the
// collective model (predict/doctor_expect.hpp), --expect, or the other groups of the same run.

#include <string>
#include <vector>

#include "bench/doctor_result.hpp"
#include "core/collective.hpp"
#include "core/run_context.hpp"
#include "predict/doctor_expect.hpp"
#include "predict/doctor_rounds.hpp"
#include "runtime/backend.hpp"
#include "runtime/mpi.hpp"

namespace commscale {

// Where the job's ranks are: node i is hosts[i], in the order hosts first appear among the ranks.
struct JobLayout {
  std::vector<RankPlacement> ranks;          // by world rank
  std::vector<std::string> hosts;            // by node
  std::vector<int> node_of;                  // by world rank
  std::vector<std::vector<int>> node_ranks;  // by node: its world ranks by local rank

  // The rank of the cluster description (node x G + local rank) standing for a world rank; -1 when
  // the node holds more ranks than the cluster's G GPUs.
  [[nodiscard]] int cluster_rank(int world_rank, int gpus_per_node) const;
  [[nodiscard]] int largest_node() const;  // ranks on the fullest node
};
[[nodiscard]] JobLayout job_layout(const RunContext& context);

// What one sweep measured, on rank 0: each group's time per iteration (its slowest member's loop),
// and the wrong elements of its checked run.
struct GroupTimes {
  std::vector<std::vector<int>> groups;
  std::vector<double> time_us;  // by group
  std::uint64_t wrong = 0;      // over all groups (the sweep counts them together)
  bool checked = false;
};

// Runs on every rank; the result is filled on rank 0 only. Groups cover every rank exactly once.
[[nodiscard]] GroupTimes time_groups(Collective c, Bytes size, const std::vector<std::vector<int>>& groups,
                                     const DoctorOptions& options, Backend& backend, Communicator& world_comm,
                                     const MpiComm& world);

// Bus bandwidth of `c` of `size` fp32 bytes over a group of `ranks` that took `time_us`.
[[nodiscard]] double group_busbw_GBps(Collective c, Bytes size, int ranks, double time_us);

// Rank 0: node groups (`key` node_all_reduce) or the job (`key` all_reduce or all_gather): a check
// per group. Groups without an expectation are judged against the 75th percentile of the groups'
// results when there are two or more of them.
[[nodiscard]] std::vector<predict::DoctorCheck> collective_checks(Collective c, const GroupTimes& t, Bytes size,
                                                                  const JobLayout& job, const std::string& phase,
                                                                  const std::string& key,
                                                                  const predict::DoctorExpectations& expect,
                                                                  double min_ratio);

}  // namespace commscale

#pragma once

// One collective predicted over a size sweep, as `commscale bench` would time it on a cluster of the
// catalog: `commscale predict --collective`. The group is ranks 0 .. ranks-1 of the cluster (mpirun's
// default placement: node by node), alone on its links; every row is the collective model's time
// (comm_model.hpp) for the size bench would run (the nccl-tests size after rounding gathers, scatters
// and all-to-all down to 16-byte chunks), with algbw and busbw as bench computes them. Measured sweeps
// of the same sizes are compared with these rows by launch/collective_latency.py.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/collective.hpp"
#include "core/dtype.hpp"
#include "core/routing.hpp"
#include "core/traffic_matrix.hpp"
#include "core/units.hpp"
#include "predict/comm_model.hpp"
#include "predict/group_links.hpp"
#include "predict/target.hpp"

namespace commscale::predict {

struct CollectiveSweepRequest {
  std::vector<Collective> collectives;
  std::vector<Bytes> sizes;  // requested, as bench's -b/-e/-f give them
  DataType dtype = DataType::kFloat32;
  int ranks = 0;  // 0: every GPU of the target
  // alltoallv's traffic (bench's --matrix or --routing); neither: uniform.
  std::optional<TrafficMatrix> matrix;
  std::optional<RoutingSpec> routing;
};

// alltoallv's row: what the busiest ranks move, and the busiest one's split between links inside and
// between nodes (bytes a rank sends or receives, itself excluded for the split).
struct PredictedTraffic {
  std::uint64_t max_send_bytes = 0;
  std::uint64_t max_recv_bytes = 0;
  double recv_max_over_mean = 1.0;
  std::uint64_t max_intra_bytes = 0;  // the most a rank sends or receives inside its node
  std::uint64_t max_inter_bytes = 0;  // the most a rank sends or receives across nodes
};

struct PredictedCollectiveRow {
  Collective collective = Collective::kAllReduce;
  Bytes size;  // bench's "size" column for the requested size
  CommEstimate estimate;
  GBps algbw;
  GBps busbw;
  std::optional<PredictedTraffic> traffic;  // alltoallv only
};

struct CollectiveSweepPrediction {
  int ranks = 0;
  int nodes = 0;
  GroupLinks group;       // the group's ring as the link graph sees it
  FlowLinks all_to_all;   // its slowest all-to-all flow (when the request has all-to-all)
  FlowLinks intra_flow;   // alltoallv: the slowest flow inside a node and between nodes, all pairs at once
  FlowLinks inter_flow;
  std::string traffic_source;                // alltoallv's matrix: the file or the routing
  std::vector<PredictedCollectiveRow> rows;  // by collective, then size; sizes bench skips (0) are left out
};

// The most ranks an all-to-all sweep analyses: its flows are every ordered pair of ranks (1024 ranks,
// a million pairs, take about 0.4 GB and seconds; 4096 take 4 GB).
inline constexpr int kMaxAllToAllRanks = 2048;

[[nodiscard]] bool has_all_to_all(const CollectiveSweepRequest& request);
// Throws InputError("--collective") for an all-to-all over more than kMaxAllToAllRanks ranks: called
// before the target's link graph is built, so the refusal is immediate.
void check_all_to_all_ranks(const CollectiveSweepRequest& request, std::int64_t ranks);

// Throws InputError("--ranks") when the request asks for more ranks than the target has, and
// InputError("--collective") for an all-to-all over more than kMaxAllToAllRanks ranks.
[[nodiscard]] CollectiveSweepPrediction predict_collective_sweep(const Target& target,
                                                                 const CollectiveSweepRequest& request);

}  // namespace commscale::predict

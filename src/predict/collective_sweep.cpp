#include "predict/collective_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale::predict {

namespace {

bool has(const CollectiveSweepRequest& request, Collective c) {
  return std::find(request.collectives.begin(), request.collectives.end(), c) != request.collectives.end();
}

// Every ordered pair of the group at once, as a balanced all-to-all loads the links: the slowest flow
// inside a node and the slowest between nodes (ranks are placed node by node).
void pair_flows(LinkAnalyzer& analyzer, int ranks, int per_node, CollectiveSweepPrediction& out) {
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < ranks; ++i) {
    for (int j = 0; j < ranks; ++j) {
      if (i != j) pairs.emplace_back(i, j);
    }
  }
  const std::vector<FlowLinks> flows = analyzer.flows(pairs);
  bool intra = false;
  bool inter = false;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const bool same = pairs[k].first / per_node == pairs[k].second / per_node;
    FlowLinks& slowest = same ? out.intra_flow : out.inter_flow;
    bool& seen = same ? intra : inter;
    if (!seen || flows[k].bw < slowest.bw) slowest = flows[k];
    seen = true;
  }
}

// alltoallv priced from its busiest rank (MOE.md, BENCH.md): every rank's bytes to peers inside its node
// share its links into the node at the rate the balanced all-to-all's slowest intra-node flow gets from
// each of its peers at once, (local - 1) x that flow; bytes to other nodes likewise over
// (ranks - local) x the slowest inter-node flow. The two run at once, so the slower side sets the time,
// and the row is priced as the balanced all-to-all that moves its per-peer share over the group's slowest
// flow in that time (same latency, protocol and calibration curve as alltoall).
PredictedCollectiveRow alltoallv_row(const Target& target, const CollectiveSweepPrediction& out, const TrafficMatrix& m,
                                     Bytes requested, DataType dtype, int per_node) {
  const int n = m.ranks;
  const AlltoallvLayout v = alltoallv_layout(m, requested, dtype, 0);
  const std::vector<std::uint64_t> bytes = peer_bytes(m, requested);
  PredictedTraffic traffic{v.load.max_send_bytes, v.load.max_recv_bytes, v.load.recv_imbalance(), 0, 0};
  const auto un = static_cast<std::size_t>(n);
  for (std::size_t i = 0; i < un; ++i) {
    std::uint64_t send[2] = {0, 0};  // inside, across
    std::uint64_t recv[2] = {0, 0};
    for (std::size_t j = 0; j < un; ++j) {
      if (i == j) continue;
      const int across = static_cast<int>(i) / per_node != static_cast<int>(j) / per_node ? 1 : 0;
      send[across] += bytes[i * un + j];
      recv[across] += bytes[j * un + i];
    }
    traffic.max_intra_bytes = std::max({traffic.max_intra_bytes, send[0], recv[0]});
    traffic.max_inter_bytes = std::max({traffic.max_inter_bytes, send[1], recv[1]});
  }
  const int local = std::min(per_node, n);
  double seconds = 0.0;
  if (local > 1) {
    seconds = static_cast<double>(traffic.max_intra_bytes) / (out.intra_flow.bw.value() * 1e9 * (local - 1));
  }
  if (n > local) {
    seconds = std::max(seconds,
                       static_cast<double>(traffic.max_inter_bytes) / (out.inter_flow.bw.value() * 1e9 * (n - local)));
  }
  // Rounded to the byte: a uniform matrix then prices alltoall's size exactly.
  const Bytes equivalent(static_cast<std::uint64_t>(std::llround(seconds * out.all_to_all.bw.value() * 1e9 * n)));
  PredictedCollectiveRow row;
  row.collective = Collective::kAllToAllV;
  row.size = v.mean_bytes;
  row.estimate = target.comm.collective(Collective::kAllToAll, equivalent, out.group, &out.all_to_all);
  const Bandwidths bw = collective_bandwidths(v.layout, row.estimate.time);
  row.algbw = bw.algbw;
  row.busbw = bw.busbw;
  row.traffic = traffic;
  return row;
}

}  // namespace

bool has_all_to_all(const CollectiveSweepRequest& request) {
  return has(request, Collective::kAllToAll) || has(request, Collective::kAllToAllV);
}

void check_all_to_all_ranks(const CollectiveSweepRequest& request, std::int64_t ranks) {
  if (!has_all_to_all(request) || ranks <= kMaxAllToAllRanks) return;
  throw InputError("--collective", fmt::format("alltoall over {} ranks", ranks),
                   fmt::format("at most {} ranks for alltoall (its analysis holds every pair of ranks): fewer "
                               "--nodes or --ranks, or the other collectives by name",
                               kMaxAllToAllRanks));
}

CollectiveSweepPrediction predict_collective_sweep(const Target& target, const CollectiveSweepRequest& request) {
  const int ranks = request.ranks > 0 ? request.ranks : target.gpus();
  if (ranks > target.gpus()) {
    throw InputError("--ranks", fmt::format("{} ranks on {} node(s) of {}", ranks, target.nodes, target.cluster.name),
                     fmt::format("at most {} (or more --nodes)", target.gpus()));
  }
  const bool any_all_to_all = has_all_to_all(request);
  check_all_to_all_ranks(request, ranks);
  std::vector<int> members(static_cast<std::size_t>(ranks));
  std::iota(members.begin(), members.end(), 0);
  LinkAnalyzer analyzer(target.graph, target.achievable);
  CollectiveSweepPrediction out;
  out.ranks = ranks;
  out.group = analyzer.groups({members}).front();
  out.nodes = out.group.nodes;
  // Only all-to-all reads the pairwise flows, whose analysis grows with ranks squared.
  if (ranks > 1 && any_all_to_all) out.all_to_all = analyzer.all_to_all({members}).front();
  const int per_node = target.cluster.gpus_per_node();
  TrafficMatrix traffic;
  if (has(request, Collective::kAllToAllV)) {
    pair_flows(analyzer, ranks, per_node, out);
    traffic = alltoallv_traffic(request.matrix, request.routing, ranks);
    out.traffic_source = traffic.source;
  }
  for (const Collective c : request.collectives) {
    for (const Bytes requested : request.sizes) {
      if (c == Collective::kAllToAllV) {
        PredictedCollectiveRow row = alltoallv_row(target, out, traffic, requested, request.dtype, per_node);
        if (row.size.count() > 0) out.rows.push_back(std::move(row));
        continue;
      }
      const CollectiveLayout layout = collective_layout(c, requested, request.dtype, ranks, 0);
      if (layout.size.count() == 0) continue;  // bench times an empty call there: nothing to predict
      PredictedCollectiveRow row;
      row.collective = c;
      row.size = layout.size;
      row.estimate = target.comm.collective(c, layout.size, out.group, &out.all_to_all);
      const Bandwidths bw = collective_bandwidths(layout, row.estimate.time);
      row.algbw = bw.algbw;
      row.busbw = bw.busbw;
      out.rows.push_back(row);
    }
  }
  // Sizes below one element per rank (alltoallv: 16 bytes per peer) are empty calls, left out above; with every
  // size so, the table had no row at all and the command exited 0.
  if (out.rows.empty() && !request.sizes.empty()) {
    throw InputError("-e/--maxbytes",
                     fmt::format("sizes of {} to {} B are each an empty call over {} ranks",
                                 request.sizes.front().count(), request.sizes.back().count(), ranks),
                     "a larger size: at least an element per rank, and 16 bytes per pair of ranks for alltoallv");
  }
  return out;
}

}  // namespace commscale::predict

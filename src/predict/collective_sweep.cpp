#include "predict/collective_sweep.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale::predict {

bool has_all_to_all(const CollectiveSweepRequest& request) {
  return std::find(request.collectives.begin(), request.collectives.end(), Collective::kAllToAll) !=
         request.collectives.end();
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
  for (const Collective c : request.collectives) {
    for (const Bytes requested : request.sizes) {
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
  return out;
}

}  // namespace commscale::predict

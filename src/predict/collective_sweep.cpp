#include "predict/collective_sweep.hpp"

#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale::predict {

CollectiveSweepPrediction predict_collective_sweep(const Target& target, const CollectiveSweepRequest& request) {
  const int ranks = request.ranks > 0 ? request.ranks : target.gpus();
  if (ranks > target.gpus()) {
    throw InputError("--ranks", fmt::format("{} ranks on {} node(s) of {}", ranks, target.nodes, target.cluster.name),
                     fmt::format("at most {} (or more --nodes)", target.gpus()));
  }
  std::vector<int> members(static_cast<std::size_t>(ranks));
  std::iota(members.begin(), members.end(), 0);
  LinkAnalyzer analyzer(target.graph, target.achievable);
  CollectiveSweepPrediction out;
  out.ranks = ranks;
  out.group = analyzer.groups({members}).front();
  out.nodes = out.group.nodes;
  if (ranks > 1) out.all_to_all = analyzer.all_to_all({members}).front();
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

#include "parallel/program_builder.hpp"

#include "parallel/program_size.hpp"
#include "parallel/rank_layout.hpp"
#include "parallel/stage_builder.hpp"

namespace commscale {
namespace {

std::vector<Group> rank_groups(const TransformerConfig& m, const ParallelPlan& p, const RankLayout& layout, int rank) {
  std::vector<int> pipeline = layout.group(rank, ParallelDim::kPp);
  std::vector<Group> groups = {{"tp", layout.group(rank, ParallelDim::kTp)},
                               {"dp", layout.group(rank, ParallelDim::kDp)},
                               {"pp-fwd", pipeline},
                               {"pp-bwd", pipeline}};
  const int stage = layout.coords(rank).pp;
  if (m.vocab > 0 && m.tied_embeddings && p.pp > 1 && (stage == 0 || stage == p.pp - 1)) {
    groups.push_back({"embedding", {pipeline.front(), pipeline.back()}});
  }
  return groups;
}

}  // namespace

ProgramSet build_program(const TransformerConfig& m, const ParallelPlan& p) {
  validate_plan(m, p, world_size(p));
  check_program_size(p);
  const RankLayout layout(p.tp, p.dp, p.pp, p.order);
  ProgramSet set;
  set.world_size = layout.world_size();
  set.programs.reserve(static_cast<std::size_t>(p.pp));
  for (int stage = 0; stage < p.pp; ++stage) set.programs.push_back(build_stage_program(m, p, stage));
  set.ranks.reserve(static_cast<std::size_t>(set.world_size));
  for (int rank = 0; rank < set.world_size; ++rank) {
    set.ranks.push_back({rank, layout.coords(rank).pp, rank_groups(m, p, layout, rank)});
  }
  return set;
}

}  // namespace commscale

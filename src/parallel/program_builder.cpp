#include "parallel/program_builder.hpp"

#include <optional>

#include "parallel/program_size.hpp"
#include "parallel/rank_layout.hpp"
#include "parallel/stage_builder.hpp"

namespace commscale {
namespace {

// The expert-parallel and expert-data-parallel groups of a rank, for a model with experts, and with expert
// tensor parallelism (etp > 1) its expert-tensor-parallel group.
struct ExpertGroups {
  std::vector<int> ep;
  std::vector<int> edp;
  std::optional<std::vector<int>> etp;
};

// The groups of a rank of `stage`, by handle (program_builder.hpp). `rank`: the rank in `pipeline`'s stage.
// `context`: a context-parallel plan's context-parallel group (then `dp` is the dp x cp group).
std::vector<Group> rank_groups(const TransformerConfig& m, const ParallelPlan& p, int stage, int rank,
                               std::vector<int> tp, std::vector<int> dp, const std::vector<int>& pipeline,
                               std::optional<ExpertGroups> experts = std::nullopt,
                               std::optional<std::vector<int>> context = std::nullopt) {
  std::vector<Group> groups = {{GroupRole::kTp, std::move(tp)},
                               {GroupRole::kDp, std::move(dp)},
                               {GroupRole::kPpForward, pipeline},
                               {GroupRole::kPpBackward, pipeline}};
  if (m.vocab > 0 && m.tied_embeddings && p.pp > 1 && (stage == 0 || stage == p.pp - 1)) {
    groups.push_back({GroupRole::kEmbedding, {pipeline.front(), pipeline.back()}});
  }
  if (experts) {
    if (groups.size() == kEmbeddingGroup) groups.push_back({GroupRole::kEmbedding, {rank}});  // the slot (handle 4)
    groups.push_back({GroupRole::kExpert, std::move(experts->ep)});
    groups.push_back({GroupRole::kExpertDp, std::move(experts->edp)});
  }
  if (context) {
    // The slots before it hold only the rank where the plan has no such group (handles are roles).
    while (groups.size() < handle_of(GroupRole::kContext)) {
      groups.push_back({static_cast<GroupRole>(groups.size()), {rank}});
    }
    groups.push_back({GroupRole::kContext, std::move(*context)});
  }
  if (experts && experts->etp) {
    while (groups.size() < handle_of(GroupRole::kExpertTp)) {
      groups.push_back({static_cast<GroupRole>(groups.size()), {rank}});
    }
    groups.push_back({GroupRole::kExpertTp, std::move(*experts->etp)});
  }
  return groups;
}

}  // namespace

ProgramSet build_program(const CheckedPlan& plan) {
  const TransformerConfig& m = plan.model();
  const ParallelPlan& p = plan.plan();
  check_program_size(p);
  const RankLayout layout(p.tp, p.dp, p.pp, p.order, p.cp);
  const UnitLists lists(m, p);
  ProgramSet set;
  set.world_size = layout.world_size();
  set.programs.reserve(static_cast<std::size_t>(p.pp));
  for (int stage = 0; stage < p.pp; ++stage) set.programs.push_back(StageBuilder(m, p, stage, &lists).build());
  set.ranks.reserve(static_cast<std::size_t>(set.world_size));
  std::optional<ExpertLayout> experts;
  if (m.moe.enabled()) experts.emplace(p.tp, p.dp, p.pp, p.ep, p.order, p.etp, p.cp);
  for (int rank = 0; rank < set.world_size; ++rank) {
    const int stage = layout.coords(rank).pp;
    std::optional<ExpertGroups> expert_groups;
    if (experts) {
      std::optional<std::vector<int>> etp;
      if (p.etp > 1) etp = experts->group(rank, ExpertDim::kEtp);
      expert_groups =
          ExpertGroups{experts->group(rank, ExpertDim::kEp), experts->group(rank, ExpertDim::kEdp), std::move(etp)};
    }
    std::optional<std::vector<int>> context;
    if (p.cp > 1) context = layout.group(rank, ParallelDim::kCp);
    std::vector<int> dp =
        p.cp > 1 ? layout.group(rank, ParallelDim::kDp, ParallelDim::kCp) : layout.group(rank, ParallelDim::kDp);
    set.ranks.push_back(
        {rank, stage,
         rank_groups(m, p, stage, rank, layout.group(rank, ParallelDim::kTp), std::move(dp),
                     layout.group(rank, ParallelDim::kPp), std::move(expert_groups), std::move(context))});
  }
  return set;
}

std::vector<Op> build_stage_program(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  const UnitLists lists(m, p);
  return StageBuilder(m, p, stage, &lists).build();
}

Bytes pipeline_transfer_bytes(const TransformerConfig& m, const ParallelPlan& p) {
  // A context-parallel rank sends its seq / cp tokens.
  const std::uint64_t tokens =
      static_cast<std::uint64_t>(p.micro_batch) * static_cast<std::uint64_t>(m.seq) / static_cast<std::uint64_t>(p.cp);
  const bool sp = p.sequence_parallel && p.tp > 1;
  // With sequence parallelism the stage boundary is already split along the sequence: 1/t each.
  return Bytes(tokens * static_cast<std::uint64_t>(m.hidden) * size_of(m.dtype) /
               static_cast<std::uint64_t>(sp ? p.tp : 1));
}

CoarseShape coarse_shape(const ParallelPlan& p) {
  return {p.dp,
          p.tp,
          p.pp,
          p.sequence_parallel,
          p.zero_stage,
          microbatches_per_step(p),
          p.schedule,
          p.chunks,
          p.bucket_bytes.count(),
          p.overlap_grad_reduce,
          p.first_stage_layers,
          p.last_stage_layers,
          p.optimizer,
          p.kernels,
          p.framework,
          p.lora,
          p.offload_optimizer,
          p.offload_params,
          p.offload_activations ? p.micro_batch : 0};
}

void resize_transfers(CoarseProgram& program, Bytes bytes) {
  for (std::vector<Op>& ops : program.set.programs) {
    for (Op& op : ops) {
      if (auto* t = std::get_if<PointToPoint>(&op.payload)) t->bytes = bytes;
    }
  }
}

CoarseProgram build_coarse_program(const TransformerConfig& m, const ParallelPlan& p) {
  CoarseProgram out;
  out.set.world_size = p.pp;
  std::vector<int> pipeline(static_cast<std::size_t>(p.pp));
  for (int s = 0; s < p.pp; ++s) pipeline[static_cast<std::size_t>(s)] = s;
  for (int s = 0; s < p.pp; ++s) {
    StageBuilder builder(m, p, s, nullptr);
    out.set.programs.push_back(builder.build());
    out.work.push_back(builder.take_work());
    std::optional<ExpertGroups> experts;
    if (m.moe.enabled()) {
      experts = ExpertGroups{{s}, {s}, p.etp > 1 ? std::optional(std::vector<int>{s}) : std::nullopt};
    }
    out.set.ranks.push_back({s, s, rank_groups(m, p, s, s, {s}, {s}, pipeline, std::move(experts))});
  }
  return out;
}

}  // namespace commscale

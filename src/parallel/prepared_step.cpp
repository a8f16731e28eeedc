#include "parallel/prepared_step.hpp"

#include "core/error.hpp"
#include "parallel/program_builder.hpp"
#include "parallel/rank_layout.hpp"

namespace commscale {

int PreparedStep::stage_of(int rank) const {
  const ParallelPlan& p = plan();
  return RankLayout(p.tp, p.dp, p.pp, p.order, p.cp).coords(rank).pp;
}

void PreparedStep::require_deadlock_free() const {
  if (!summary.program_problems.empty()) {
    throw RuntimeFailure("the step program failed its deadlock check: " + summary.program_problems.front());
  }
}

PreparedStep prepare_step(const CheckedPlan& plan, const MemoryOptions& memory, std::optional<Bytes> gpu_memory) {
  ProgramSet program = build_program(plan);
  PlanSummary summary = summarize_plan(plan.model(), plan.plan(), program, memory, gpu_memory);
  return PreparedStep{plan, std::move(program), std::move(summary)};
}

}  // namespace commscale

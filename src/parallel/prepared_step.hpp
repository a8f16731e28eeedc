#pragma once

// A step made ready for both engines, once: the checked plan's step program built
// (program_builder.hpp) and run through the deadlock checker (program/checker.hpp), and its summary
// (FLOPs, memory per rank, traffic, the checker's verdict) taken from that program. `train` runs it
// (runtime/executor.hpp), `predict` simulates it (predict/prediction.hpp), `plan` prints it.

#include <optional>

#include "parallel/plan.hpp"
#include "parallel/plan_memory.hpp"
#include "parallel/plan_summary.hpp"
#include "program/op.hpp"

namespace commscale {

struct PreparedStep {
  CheckedPlan checked;
  ProgramSet program;
  PlanSummary summary;  // summary.program_problems: the deadlock checker's findings, empty when proven

  [[nodiscard]] const TransformerConfig& model() const noexcept { return checked.model(); }
  [[nodiscard]] const ParallelPlan& plan() const noexcept { return checked.plan(); }
  // The pipeline stage a world rank runs (its coordinate in the rank layout).
  [[nodiscard]] int stage_of(int rank) const;
  // Throws RuntimeFailure with the checker's first problem, if it found any: engines run only a
  // program proven free of deadlocks.
  void require_deadlock_free() const;
};

// `gpu_memory`: the fit verdict's GPU memory (summary.fit), none for no verdict.
[[nodiscard]] PreparedStep prepare_step(const CheckedPlan& plan, const MemoryOptions& memory,
                                        std::optional<Bytes> gpu_memory);

}  // namespace commscale

// `train --host-framework` on the CPU backend under real mpirun: a step issued at a framework's host
// costs takes at least the sum of those costs over its ops (the host spins for each); with sync
// before_optimizer nothing issued before the step phase is still running when it starts.
#include <gtest/gtest.h>

#include <algorithm>

#include "parallel/plan.hpp"
#include "parallel/prepared_step.hpp"
#include "program/host_costs.hpp"
#include "runtime/executor.hpp"
#include "runtime/session.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

TransformerConfig small_tiny() {
  TransformerConfig m = find_preset("tiny", "test");
  m.layers = 2;  // ~100 ops a step: at 5 ms each, half a second
  return m;
}

HostCosts every_op_costs(double issue_us, double step_us, HostSync sync = HostSync::kNone) {
  HostCosts h;
  h.framework = "test";
  h.source = "tests/mpi/host_pacing_test.cpp";
  for (auto& phase : h.issue) phase.fill(microseconds(issue_us));
  h.step = microseconds(step_us);
  h.sync = sync;
  return h;
}

// A run and the step program it ran (the program stays with the prepared step).
struct Trained {
  PreparedStep step;
  TrainRun run;
  [[nodiscard]] const ProgramSet& program() const { return step.program; }
};

Trained train(const ParallelPlan& plan, const HostCosts& host) {
  const MpiComm world = MpiComm::world();
  RuntimeOptions runtime;
  runtime.backend = BackendChoice::kCpu;
  const RankSession session = start_rank_session(runtime, world);
  TrainOptions options;
  options.warmup_steps = 1;
  options.steps = 3;
  options.host = host;
  PreparedStep step = prepare_step(CheckedPlan(small_tiny(), plan), {}, std::nullopt);
  TrainRun run = run_training(step, options, *session.backend, world);
  return {std::move(step), std::move(run)};
}

ParallelPlan plan_of(int dp, int pp) {
  ParallelPlan p;
  p.dp = dp;
  p.pp = pp;
  p.micro_batch = 1;
  p.global_batch = dp * 2 * pp;
  return p;
}

TEST(CpuHostPacing, StepTakesTheFrameworksHostTime) {
  const MpiComm world = MpiComm::world();
  if (world.size() > 2) GTEST_SKIP() << "runs on 1 and 2 ranks (data parallel)";
  const ParallelPlan plan = plan_of(world.size(), 1);
  constexpr double kIssueUs = 5000.0;  // well above the executor's own time per op, even on a loaded machine
  constexpr double kStepUs = 3000.0;
  const Trained paced = train(plan, every_op_costs(kIssueUs, kStepUs));
  if (world.rank() != 0) return;
  // Every rank's program is the same with data parallelism: the step is at least its step cost and
  // one issue cost per op, since each op waits for its cost after the one before it began.
  const double ops = static_cast<double>(ops_of(paced.program(), 0).size());
  const double floor_s = (kStepUs + ops * kIssueUs) * 1e-6;
  for (double s : paced.run.step_s) EXPECT_GE(s, floor_s) << "a step shorter than its host costs";
  // That the costs replace the executor's own time per op rather than add to it (no upper bound here:
  // wall time of two ranks on a shared 2-core machine ran 1.9x the floor under load) is HostPacer's
  // unit test on a fake clock (tests/unit/host_pacer_test.cpp).
}

// Pipeline parallelism leaves transfers in flight when a stage reaches its optimizer: with sync
// before_optimizer every op that started before the first step-phase op has ended when it starts.
TEST(CpuHostPacing, SyncBeforeOptimizerWaitsForEverythingIssued) {
  const MpiComm world = MpiComm::world();
  if (world.size() != 2) GTEST_SKIP() << "runs on 2 ranks (two pipeline stages)";
  const Trained t = train(plan_of(1, 2), every_op_costs(0.5, 0.0, HostSync::kBeforeOptimizer));
  if (world.rank() != 0) return;
  for (int r = 0; r < 2; ++r) {
    const std::vector<Op>& ops = ops_of(t.program(), r);
    const auto first_step = std::find_if(ops.begin(), ops.end(), [](const Op& op) { return op.phase == Phase::kStep; });
    ASSERT_NE(first_step, ops.end());
    for (int step = 0; step < t.run.timeline.steps; ++step) {
      std::vector<const TimelineEvent*> of_step(ops.size());
      for (const TimelineEvent& e : t.run.timeline.events) {
        if (e.rank == r && e.step == step) of_step.at(e.op) = &e;
      }
      const double sync_at = of_step.at(first_step->id)->start.value();
      for (const Op& op : ops) {
        const TimelineEvent& e = *of_step.at(op.id);
        if (op.id == first_step->id || e.start.value() >= sync_at) continue;
        EXPECT_LE(e.end.value(), sync_at) << "rank " << r << " step " << step << ": " << op.name
                                          << " was still running when " << first_step->name << " started";
      }
    }
  }
}

}  // namespace
}  // namespace commscale

// `train`'s executor on the CPU backend under real mpirun (ctest runs this binary with 1 to 4 ranks,
// and the 3-D plan with 8): every op runs once per step, in dependency and stream order, collectives
// and transfers line up across ranks, and the breakdown adds up to the step time.
#include <gtest/gtest.h>

#include <map>

#include "parallel/plan.hpp"
#include "program/breakdown.hpp"
#include "runtime/executor.hpp"
#include "runtime/session.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

struct Shape {
  int dp;
  int tp;
  int pp;
};

TransformerConfig tiny() { return find_preset("tiny", "test"); }

ParallelPlan plan_for(const Shape& s) {
  ParallelPlan p;
  p.dp = s.dp;
  p.tp = s.tp;
  p.pp = s.pp;
  p.micro_batch = 1;
  p.global_batch = s.dp * 2 * s.pp;  // two microbatches per pipeline stage
  p.bucket_bytes = Bytes(64 * kKiB);  // several buckets even for the tiny model
  return p;
}

// Checks one run's timeline on rank 0.
void check_run(const TrainRun& run, int steps) {
  const ProgramSet& set = run.program;
  ASSERT_EQ(run.timeline.steps, steps);
  ASSERT_NO_THROW(validate_timeline(set, run.timeline, "timeline"));
  constexpr double kSlack = 1e-6;  // the host clock's reads around one op
  std::map<std::tuple<int, int, OpId>, const TimelineEvent*> at;
  for (const TimelineEvent& e : run.timeline.events) at[{e.step, e.rank, e.op}] = &e;
  for (const TimelineEvent& e : run.timeline.events) {
    const auto& ops = ops_of(set, e.rank);
    const Op& op = ops.at(e.op);
    for (OpId d : op.deps) {
      EXPECT_LE(at.at({e.step, e.rank, d})->end.value(), e.start.value() + kSlack)
          << "rank " << e.rank << " op " << op.name << " started before its dependency " << ops[d].name;
    }
  }
  // Each stream runs its ops one at a time, in program order.
  for (int step = 0; step < steps; ++step) {
    for (int r = 0; r < set.world_size; ++r) {
      std::map<Stream, const TimelineEvent*> previous;
      for (const Op& op : ops_of(set, r)) {
        const TimelineEvent* e = at.at({step, r, op.id});
        if (const auto it = previous.find(op.stream); it != previous.end()) {
          EXPECT_LE(it->second->end.value(), e->start.value() + kSlack) << "rank " << r << " stream " << name(op.stream);
        }
        previous[op.stream] = e;
      }
    }
    const StepBreakdown b = break_down_step(set, run.timeline, step);
    for (const RankBreakdown& rb : b.ranks) {
      EXPECT_GE(rb.bubble.value(), -kSlack) << "rank " << rb.rank << ": compute and communication exceed the step";
      EXPECT_NEAR((rb.compute + rb.exposed_comm + rb.bubble).value(), b.step_time.value(), 1e-9);
      EXPECT_GT(rb.compute.value(), 0.0);
    }
  }
  EXPECT_EQ(run.step_s.size(), static_cast<std::size_t>(steps));
  for (double s : run.step_s) EXPECT_GT(s, 0.0);
}

void run_shape(const Shape& shape) {
  const MpiComm world = MpiComm::world();
  if (shape.dp * shape.tp * shape.pp != world.size()) GTEST_SKIP() << "needs " << shape.dp * shape.tp * shape.pp << " ranks";
  RuntimeOptions runtime;
  runtime.backend = BackendChoice::kCpu;
  const RankSession session = start_rank_session(runtime, world);
  TrainOptions options;
  options.warmup_steps = 1;
  options.steps = 2;
  const TrainRun run = run_training(tiny(), plan_for(shape), options, *session.backend, world);
  if (world.rank() == 0) check_run(run, options.steps);
}

TEST(CpuTrain, DataParallel2) { run_shape({2, 1, 1}); }
TEST(CpuTrain, TensorParallel2) { run_shape({1, 2, 1}); }
TEST(CpuTrain, PipelineParallel2) { run_shape({1, 1, 2}); }
TEST(CpuTrain, DataParallel4) { run_shape({4, 1, 1}); }
TEST(CpuTrain, TensorParallel2PipelineParallel2) { run_shape({1, 2, 2}); }
TEST(CpuTrain, DataParallel2TensorParallel2) { run_shape({2, 2, 1}); }
TEST(CpuTrain, DataParallel2PipelineParallel2) { run_shape({2, 1, 2}); }
TEST(CpuTrain, AllThree) { run_shape({2, 2, 2}); }

TEST(CpuTrain, PlanMustMatchTheJob) {
  const MpiComm world = MpiComm::world();
  RuntimeOptions runtime;
  runtime.backend = BackendChoice::kCpu;
  const RankSession session = start_rank_session(runtime, world);
  const Shape wrong{world.size() + 1, 1, 1};
  EXPECT_THROW((void)run_training(tiny(), plan_for(wrong), TrainOptions{}, *session.backend, world), Error);
}

}  // namespace
}  // namespace commscale

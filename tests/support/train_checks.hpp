#pragma once

// Checks of a training run's timeline shared by the CPU (tests/mpi) and GPU (tests/gpu) tests: every op
// ran once per step, after its dependencies, one at a time per stream in program order, and the
// breakdown adds up to the step time.

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "program/breakdown.hpp"
#include "runtime/executor.hpp"

namespace commscale::testing {

// Checks one run of the program `set` on rank 0.
inline void check_run(const ProgramSet& set, const TrainRun& run, int steps) {
  ASSERT_EQ(run.timeline.steps, steps);
  ASSERT_NO_THROW(validate_timeline(set, run.timeline, "timeline"));
  constexpr double kSlack = 2e-6;  // clock resolution: the host clock's reads, CUDA events' 0.5 us
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

}  // namespace commscale::testing

#pragma once

// `commscale train` on every rank: runs warm-up and timed steps of a prepared step
// (parallel/prepared_step.hpp) on the backend's step engine, and gathers what happened to rank 0 as a
// timeline (the predictor's schema) and per-step times.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "parallel/prepared_step.hpp"
#include "program/breakdown.hpp"
#include "program/host_costs.hpp"
#include "program/step_summary.hpp"
#include "program/timeline.hpp"
#include "runtime/backend.hpp"
#include "runtime/mpi.hpp"
#include "workload/transformer.hpp"

namespace commscale {

enum class TrainTiming {
  kPerOp,     // every op timed (the timeline and breakdown)
  kStepOnly,  // only whole steps timed
  kBoth,      // alternate the two, step by step, to measure what per-op timing costs
};

struct TrainOptions {
  int warmup_steps = 2;
  int steps = 5;  // timed steps (of each mode with kBoth)
  TrainTiming timing = TrainTiming::kPerOp;
  Seconds timeout{0.0};
  bool tf32 = false;
  bool gemm_check = false;  // after the steps, time each GEMM shape alone and compare (GPU)
  // Called on rank 0 after each step (warm-up included) with the steps done and the steps in all.
  std::function<void(int done, int total)> on_step;
  std::optional<CollectiveSkip> skip;  // testing: a rank that skips one collective call
  // train --host-framework: issue every op at this framework's host costs (runtime/host_pacer.hpp).
  HostCosts host;
};

// One timed step as it completes, on rank 0: for JSON Lines written as the run goes.
struct TimedStep {
  int index = 0;              // from 0, per timing mode
  std::string timing;         // "op" (per-op timing) or "step" (whole step only)
  double step_s = 0.0;        // the slowest rank's
  std::vector<double> rank_step_s;
};
using StepObserver = std::function<void(const TimedStep&)>;


// What rank 0 reports (other ranks get an empty result).
struct TrainRun {
  Timeline timeline;                      // per-op steps, engine "executor"
  std::vector<double> step_s;             // per-op steps: the slowest rank's step time
  std::vector<double> step_only_s;        // step-only steps
  std::vector<std::vector<double>> rank_step_s;  // [step][rank], per-op steps
  Bytes pool;                             // memory the engine allocated per rank (the largest)
  Bytes modelled;                         // what the memory model says (without the workspace allowance)
  std::string method;                     // how the engine runs and times ops
  std::vector<GemmCheck> gemm_checks;     // with TrainOptions::gemm_check, on GPUs
};

// Ends the job with an InputError (exit 2, on every rank) when the plan's ranks are not the job's.
// Collective over `world`. Called first by run_training; callers that open result files call it before.
void check_plan_matches_world(const ParallelPlan& plan, const MpiComm& world);

// Runs the steps of `step`, whose program must be free of deadlocks (PreparedStep::require_deadlock_free
// throws otherwise). Each rank's pool holds at least its stage's modelled memory (step.summary.memory,
// less the workspace allowance). Collective over `world`. Rank 0 calls `observer` (when set) after each
// timed step.
[[nodiscard]] TrainRun run_training(const PreparedStep& step, const TrainOptions& options, Backend& backend,
                                    const MpiComm& world, const StepObserver& observer = {});

}  // namespace commscale

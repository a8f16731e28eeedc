#include "runtime/executor.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "runtime/control_plane.hpp"

namespace commscale {
namespace {

// Adds one per-op step of every rank to rank 0's timeline.
void gather_step(const MpiComm& world, const StepRun& run, int step, TrainRun* out) {
  std::vector<double> mine;
  mine.reserve(2 * run.start_s.size());
  for (std::size_t i = 0; i < run.start_s.size(); ++i) {
    mine.push_back(run.start_s[i]);
    mine.push_back(run.end_s[i]);
  }
  // Op lists differ in length between stages: gather the lengths, then the times.
  const std::vector<int> counts = world.allgather(static_cast<int>(mine.size()));
  std::vector<int> offsets(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  std::vector<double> all(world.rank() == 0 ? static_cast<std::size_t>(offsets.back() + counts.back()) : 0);
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Igatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), counts.data(),
                         offsets.data(), MPI_DOUBLE, 0, world.get(), &request));
  wait_polled(request, "the gathering of a step's op times to rank 0");
  if (world.rank() != 0) return;
  for (int r = 0; r < world.size(); ++r) {
    const auto base = static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]);
    const std::size_t n = static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]) / 2;
    for (std::size_t op = 0; op < n; ++op) {
      out->timeline.events.push_back(TimelineEvent{r, step, static_cast<OpId>(op), Seconds(all[base + 2 * op]),
                                                   Seconds(all[base + 2 * op + 1])});
    }
  }
}

// Every rank's step time of one step, on rank 0.
std::vector<double> gather_step_times(const MpiComm& world, const StepRun& run) {
  const double mine = run.step.value();
  return world.gather(std::span<const double>(&mine, 1), 0);
}

// Rank 0's GEMMs by shape: the median duration over the timed steps, and the same GEMM alone.
std::vector<GemmCheck> check_gemms(const std::vector<Op>& ops, const std::vector<StepRun>& runs, StepEngine& engine) {
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, DataType>, std::pair<Gemm, std::vector<double>>>
      shapes;
  for (const Op& op : ops) {
    const auto* g = std::get_if<Gemm>(&op.payload);
    if (g == nullptr) continue;
    auto& [gemm, times] = shapes[{g->m, g->n, g->k, g->batch, g->dtype}];
    gemm = *g;
    for (const StepRun& run : runs) times.push_back(run.end_s[op.id] - run.start_s[op.id]);
  }
  std::vector<GemmCheck> checks;
  for (auto& [key, entry] : shapes) {
    auto& [gemm, times] = entry;
    const std::optional<Seconds> alone = engine.standalone_gemm(gemm, 20);
    if (!alone) return {};
    std::sort(times.begin(), times.end());
    checks.push_back(GemmCheck{gemm, static_cast<int>(times.size() / std::max<std::size_t>(1, runs.size())),
                               times[times.size() / 2], alone->value()});
  }
  return checks;
}

}  // namespace

void check_plan_matches_world(const ParallelPlan& plan, const MpiComm& world) {
  if (world_size(plan) != world.size()) {
    // cp is named where it is in the product (the message read dp 1 x tp 1 x pp 1 = 2 ranks with --cp 2).
    const std::string cp = plan.cp > 1 ? fmt::format(" x cp {}", plan.cp) : "";
    fail_on_all_ranks(world, InputError(plan.cp > 1 ? "--tp/--pp/--dp/--cp" : "--tp/--pp/--dp",
                                        fmt::format("the plan has dp {} x tp {} x pp {}{} = {} ranks but the job has {}",
                                                    plan.dp, plan.tp, plan.pp, cp, world_size(plan), world.size()),
                                        "a plan whose ranks equal mpirun's -np"));
  }
}

TrainRun run_training(const PreparedStep& step, const TrainOptions& options, Backend& backend, const MpiComm& world,
                      const StepObserver& observer) {
  check_plan_matches_world(step.plan(), world);
  step.require_deadlock_free();
  TrainRun out;
  const MemoryBreakdown& mine = step.summary.memory.at(static_cast<std::size_t>(step.stage_of(world.rank()))).bytes;
  // The workspace allowance stands for the CUDA context, cuBLAS and NCCL, which allocate for real.
  StepEngineConfig config{&step.program, world.rank(), mine.total() - mine.workspace, options.timeout, options.tf32,
                          options.skip, options.host};
  const std::unique_ptr<StepEngine> engine = backend.make_step_engine(config);
  out.method = engine->method();
  out.modelled = config.modelled;
  const double pool = static_cast<double>(engine->buffers().pool.count());
  out.pool = Bytes(static_cast<std::uint64_t>(world.broadcast(pool, 0)));

  const StepTiming warm = options.timing == TrainTiming::kStepOnly ? StepTiming::kStepOnly : StepTiming::kPerOp;
  std::vector<StepRun> per_op_runs;  // rank 0's, for the GEMM check
  const int modes = options.timing == TrainTiming::kBoth ? 2 : 1;
  const int total_steps = options.warmup_steps + modes * options.steps;
  int steps_done = 0;
  const auto step_done = [&](int count) {
    steps_done += count;
    if (options.on_step && world.rank() == 0) options.on_step(steps_done, total_steps);
  };
  for (int i = 0; i < options.warmup_steps; ++i) {
    (void)engine->run_step(warm);
    step_done(1);
  }

  out.timeline.engine = "executor";
  out.timeline.world_size = world.size();
  for (int s = 0; s < options.steps; ++s) {
    if (options.timing != TrainTiming::kPerOp) {
      const std::vector<double> times = gather_step_times(world, engine->run_step(StepTiming::kStepOnly));
      if (world.rank() == 0) {
        out.step_only_s.push_back(*std::max_element(times.begin(), times.end()));
        if (observer) observer(TimedStep{s, "step", out.step_only_s.back(), times});
      }
    }
    if (options.timing != TrainTiming::kStepOnly) {
      StepRun run = engine->run_step(StepTiming::kPerOp);
      gather_step(world, run, out.timeline.steps, &out);
      const std::vector<double> times = gather_step_times(world, run);
      if (world.rank() == 0) {
        out.step_s.push_back(*std::max_element(times.begin(), times.end()));
        out.rank_step_s.push_back(times);
        if (observer) observer(TimedStep{s, "op", out.step_s.back(), times});
        if (options.gemm_check) per_op_runs.push_back(std::move(run));
      }
      ++out.timeline.steps;
    }
    step_done(modes);
  }
  if (options.gemm_check && world.rank() == 0 && !per_op_runs.empty()) {
    out.gemm_checks = check_gemms(ops_of(step.program, 0), per_op_runs, *engine);
  }
  world.barrier();  // the other ranks wait while rank 0 times its GEMMs alone
  return out;
}

}  // namespace commscale

// How long building and checking a step program takes, for the plans people actually run.
// Results and the command line: results/program-build-bench/README.md.

#include <benchmark/benchmark.h>

#include "parallel/program_builder.hpp"
#include "program/checker.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

struct Case {
  TransformerConfig model;
  ParallelPlan plan;
};

// GPT-3 175B on 1024 ranks: tp 8, pp 16, dp 8, 1F1B, micro-batch 1, 64 microbatches per step.
Case gpt3_175b(bool heavy) {
  Case c{find_preset("gpt3-175b", ""), {}};
  c.plan.tp = 8;
  c.plan.pp = 16;
  c.plan.dp = 8;
  c.plan.global_batch = 8 * 64;
  if (heavy) {  // more ops per layer: sequence parallelism, ZeRO-1, full recompute
    c.plan.sequence_parallel = true;
    c.plan.zero_stage = 1;
    c.plan.recompute = Recompute::kFull;
  }
  return c;
}

// LLaMA-2 70B on 512 ranks: tp 8, pp 8 interleaved with 2 chunks, dp 8, ZeRO-3, 64 microbatches.
Case llama2_70b() {
  Case c{find_preset("llama2-70b", ""), {}};
  c.plan.tp = 8;
  c.plan.pp = 8;
  c.plan.dp = 8;
  c.plan.schedule = ScheduleKind::kInterleaved;
  c.plan.chunks = 2;
  c.plan.zero_stage = 3;
  c.plan.sequence_parallel = true;
  c.plan.global_batch = 8 * 64;
  return c;
}

void count_ops(benchmark::State& state, const ProgramSet& set) {
  std::size_t most = 0;
  for (const auto& ops : set.programs) most = std::max(most, ops.size());
  state.counters["ranks"] = static_cast<double>(set.ranks.size());
  state.counters["op_lists"] = static_cast<double>(set.programs.size());
  state.counters["max_ops_per_rank"] = static_cast<double>(most);
}

void build(benchmark::State& state, const Case& c) {
  ProgramSet set;
  for (auto _ : state) {
    set = build_program(CheckedPlan(c.model, c.plan));
    benchmark::DoNotOptimize(set.programs.data());
  }
  count_ops(state, set);
}

void check(benchmark::State& state, const Case& c) {
  const ProgramSet set = build_program(CheckedPlan(c.model, c.plan));
  for (auto _ : state) {
    const ProgramCheck result = check_program(set);
    if (!result.ok()) state.SkipWithError(result.problems.front().c_str());
  }
  count_ops(state, set);
}

void build_and_check(benchmark::State& state, const Case& c) {
  ProgramSet set;
  for (auto _ : state) {
    set = build_program(CheckedPlan(c.model, c.plan));
    const ProgramCheck result = check_program(set);
    if (!result.ok()) state.SkipWithError(result.problems.front().c_str());
  }
  count_ops(state, set);
}

BENCHMARK_CAPTURE(build, gpt3_175b_1024_ranks, gpt3_175b(false))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(check, gpt3_175b_1024_ranks, gpt3_175b(false))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(build_and_check, gpt3_175b_1024_ranks, gpt3_175b(false))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(build_and_check, gpt3_175b_1024_ranks_sp_zero1_full_recompute, gpt3_175b(true))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(build_and_check, llama2_70b_512_ranks_interleaved_zero3, llama2_70b())->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace commscale

BENCHMARK_MAIN();

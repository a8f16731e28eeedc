// How long `commscale search` takes: the full search of GPT-3 175B (every valid plan on 1024 A100s,
// 128 HGX A100 nodes, global batch 1536 as GPT-3 trained) on the CPUs the process may use (`taskset -c 0`
// for one), and a one-node search for scale. Results and the command line: results/search-bench/README.md.
//
// The first two keep the options the benchmark was first run with (no flash attention, so three
// recompute choices; the host issuing at no cost); `_cli` is the search as `commscale search` runs it
// by default today (flash attention; commscale's host costs, topologies/frameworks.json).

#include <benchmark/benchmark.h>

#include "hw/topology_dir.hpp"
#include "predict/host_catalog.hpp"
#include "predict/search.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

void run_search(benchmark::State& state, const std::string& model_name, const std::string& cluster_name, int nodes,
                int global_batch, bool cli_defaults = false) {
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  const TransformerConfig model = find_preset(model_name, "bench");
  predict::SearchOptions options;
  options.global_batch = global_batch;
  options.flash_attention = cli_defaults;
  const HostCosts host = cli_defaults ? predict::host_costs_for("commscale", nullptr, "bench") : HostCosts{};
  predict::SearchResult result;
  for (auto _ : state) {
    // Everything a `search` run does past reading the catalog: the target (link graph, NCCL figures),
    // the evaluator's caches, every plan.
    const predict::Target target =
        predict::make_target(catalog, catalog.cluster(cluster_name, "bench"), nodes, nullptr, host);
    predict::PlanEvaluator evaluator(model, target, options.memory);
    result = predict::search_plans({&evaluator}, options);
    benchmark::DoNotOptimize(result);
  }
  state.counters["gpus"] = static_cast<double>(result.gpus.front());
  state.counters["candidates"] = static_cast<double>(result.candidates);
  state.counters["fitting"] = static_cast<double>(result.fitting);
  if (!result.ranked.empty()) {
    state.counters["best_tokens_per_s"] = result.ranked.front().estimate.tokens_per_s;
    state.counters["best_mfu"] = result.ranked.front().estimate.mfu;
    state.SetLabel(predict::describe_plan(result.ranked.front().estimate.plan));
  }
}

void gpt3_175b_1024_a100(benchmark::State& state) { run_search(state, "gpt3-175b", "hgx-a100", 128, 1536); }
void llama2_7b_8_a100(benchmark::State& state) { run_search(state, "llama2-7b", "hgx-a100", 1, 64); }
void gpt3_175b_1024_a100_cli(benchmark::State& state) { run_search(state, "gpt3-175b", "hgx-a100", 128, 1536, true); }

BENCHMARK(gpt3_175b_1024_a100)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(llama2_7b_8_a100)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK(gpt3_175b_1024_a100_cli)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace
}  // namespace commscale

BENCHMARK_MAIN();

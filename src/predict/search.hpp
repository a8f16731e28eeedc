#pragma once

// `search`: every valid plan of a model on a cluster, ranked. For each world size asked for, plans are
// enumerated over tp (dividing heads, KV heads and the MLP), pp (dividing the layers), dp (the rest),
// micro-batch (powers of two up to max_micro_batch dividing the batch per replica), sequence
// parallelism (with tp > 1), ZeRO stage (0 to 3; only 0 without data parallelism), recompute (none,
// selective, full; selective is skipped with flash attention, where it is the same as none) and
// schedule (1F1B; with pp > 1 also GPipe and interleaved with 2 to max_chunks chunks), each checked by
// validate_plan. Each plan's memory is checked first; the ones that fit are estimated by the stage
// model (stage_model.hpp) and ranked by throughput or by cost per token.
//
// When no plan of a GPU count fits, the search tries memory-saving plans, in this order, and keeps the first
// kind with a plan that fits (SearchResult::memory_saving says which): adam8bit states (for adam and adamw),
// then ZeRO-Offload of the optimizer (ZeRO 1-3; ZeRO 2 with one replica), then ZeRO-Infinity's parameter
// offload too (ZeRO 3), then activation offload on top. LoRA is another workload (fewer trainable
// parameters), never tried unless asked for.
//
// The plans that fit are not all simulated: a plan's step is at least its busiest stage's compute stream alone
// (PlanEvaluator::step_lower_bound, no simulation), and a plan whose bound is above the K-th best step found (K
// the plans listed, --top) and not within 1% of the best cannot be listed: "compute alone slower", not simulated.
// The plans listed, the best and those within 1% of it are the same as when every plan is simulated.
//
// Why the others lose: "does not fit" (memory per rank above the GPU's); "compute alone slower" (above); "within
// 1% of the best" (a tie, for practical purposes); else, against the best plan, the part of the step that grew most:
// "communication-bound" (exposed communication), "bubble-bound" (pipeline bubble) or
// "compute-heavy" (compute: recompute, smaller or less efficient GEMMs, fewer GPUs).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_at.hpp"

#include "predict/economics.hpp"
#include "predict/stage_model.hpp"

namespace commscale::predict {

enum class RankBy : std::uint8_t { kThroughput, kCost };

struct SearchOptions {
  int global_batch = 0;
  int max_micro_batch = 8;
  int max_chunks = 4;
  bool flash_attention = false;
  KernelSet kernels = KernelSet::kFused;
  Optimizer optimizer = Optimizer::kAdam;
  bool overlap_grad_reduce = true;
  Framework framework = Framework::kCommscale;
  std::string order = "tp-dp-pp";
  RankBy rank_by = RankBy::kThroughput;
  int top = 10;
  bool memory_saving = true;  // when nothing fits: adam8bit, then offload (above)
  LoraSpec lora;              // every plan fine-tunes with LoRA (only when asked: --lora-rank)
  Fp8Recipe fp8 = Fp8Recipe::kNone;  // every plan trains its linear layers in FP8 (only when asked: --fp8)
  bool fp8_dispatch = false;         // and dispatches its experts' rows in FP8 (--fp8-dispatch)
  // Context-parallel sizes enumerated (--cp 1,2,4: only when asked; a dense model's plans with cp > 1 are
  // predicted in full, CONTEXT_PARALLEL.md), and how their attention exchanges keys and values.
  std::vector<int> cp = {1};
  CpCommType cp_comm = CpCommType::kP2p;
  // Expert-tensor-parallel sizes enumerated for a model with experts (--etp 1,2: only when asked; MOE.md).
  std::vector<int> etp = {1};
  int threads = 0;  // threads estimating plans: 0 = one per CPU this process may use (results do not depend on it)
  MemoryOptions memory;
  CostAssumptions costs;
};

struct RankedPlan {
  PlanEstimate estimate;
  std::string reason;  // why it loses to the best ("" for the best)
  std::optional<double> usd_per_million_tokens;
  std::optional<double> joules_per_token;
};

// A plan that fits but was not simulated: its compute alone is slower than the plans listed (search_plans).
struct BoundedPlan {
  PlanEstimate memory;  // memory_only's
  Seconds bound;        // its step is at least this (PlanEvaluator::step_lower_bound)
};
// Its reason: the plan loses on its busiest stage's compute stream alone.
inline constexpr std::string_view kBoundedOut = "compute alone slower";

struct SearchResult {
  std::string cluster;
  std::vector<int> gpus;
  std::size_t candidates = 0;  // valid plans enumerated
  std::size_t fitting = 0;     // ranked and bounded out
  std::vector<RankedPlan> ranked;              // the plans simulated, best first
  std::vector<PlanEstimate> not_fitting;       // the plans that do not fit, least memory first
  // The plans that fit whose compute alone takes longer than bound_limit: the K-th best step (K the plans
  // listed) or, if longer, the best step over 0.99. Not simulated: least bound first.
  std::vector<BoundedPlan> bounded_out;
  Seconds bound_limit;
  std::map<std::string, std::size_t> reasons;  // reason -> plans
  std::map<int, ClusterCost> cost_by_gpus;
  double seconds = 0.0;  // wall time of the search
  std::string batch_hint;          // with no valid plan: batch_hint() for each GPU count
  // The memory saving the ranked plans use, per GPU count where one was needed ("adam8bit",
  // "offload-optimizer", "offload-optimizer+params", "offload-all"); empty: plain plans fit.
  std::map<int, std::string> memory_saving;
  std::vector<std::string> notes;  // largest_dp_hint() for each GPU count, and the caller's (what-if, GPU)
  // Each plan predicted in full, as `predict` runs it, not by the stage model's coarse program: a model with
  // experts (stage_model.hpp).
  bool full_simulation = false;
  // Plans with context parallelism were enumerated (SearchOptions::cp): those were predicted in full, the others
  // by the coarse program.
  bool context_parallel = false;
};

// Every valid plan for `gpus` ranks (InputError naming --global-batch when it is not positive); for a model
// with experts, at every expert-parallel size that divides its experts and tp x cp x dp.
[[nodiscard]] std::vector<ParallelPlan> enumerate_plans(const TransformerConfig& model, int gpus,
                                                        const SearchOptions& options);

// When no plan of `gpus` GPUs takes the global batch (every dp that the model's tp x pp layouts leave
// fails to divide it): the nearest global batches below and above that some plan using every GPU takes,
// with their data-parallel sizes ("the nearest global batches that use all 6 GPUs: 255 (dp 3) or 258 (dp
// 3, 6) (--global-batch)"). Empty when there is none.
[[nodiscard]] std::string batch_hint(const TransformerConfig& model, int gpus, const SearchOptions& options);

// When the global batch does not split over the largest data parallelism the model's tp x pp layouts
// leave of `gpus` GPUs (6 GPUs and a batch of 64: dp 6 is out, dp 2 x pp 3 in): the nearest batches that
// do. Empty when it splits.
[[nodiscard]] std::string largest_dp_hint(const TransformerConfig& model, int gpus, const SearchOptions& options);

// `evaluators` holds one evaluator per world size, over targets the caller keeps alive.
[[nodiscard]] SearchResult search_plans(const std::vector<PlanEvaluator*>& evaluators, const SearchOptions& options);
[[nodiscard]] nlohmann::json plan_estimate_json(const PlanEstimate& e);
// The inverse, for `commscale report` (report/search_report.cpp, beside the writer): the plan is
// required, and the figures when step_time_s is there (it was estimated); the rest is read when
// present (absent or null: the default). Errors name the file and key.
[[nodiscard]] PlanEstimate plan_estimate_from_json(const JsonAt& in);
// "dp 8 tp 8 pp 16 1f1b mb 1 zero 1 recompute selective sp": a plan in one line.
[[nodiscard]] std::string describe_plan(const ParallelPlan& p);
// The predict flags that reproduce the plan.
[[nodiscard]] std::string plan_flags(const ParallelPlan& p);

}  // namespace commscale::predict

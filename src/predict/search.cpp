#include "predict/search.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <exception>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale::predict {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// The plan choices past the layout (dp, tp, pp): each combination is one candidate.
void add_variants(const TransformerConfig& m, ParallelPlan base, const SearchOptions& o,
                  std::vector<ParallelPlan>& out) {
  const int per_replica = o.global_batch / base.dp;
  const std::vector<Recompute> recomputes =
      o.flash_attention ? std::vector<Recompute>{Recompute::kNone, Recompute::kFull}
                        : std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  // Doubled in 64 bits: no overflow, whatever the options say.
  for (std::int64_t mb = 1; mb <= std::min(o.max_micro_batch, per_replica); mb *= 2) {
    if (per_replica % mb != 0) continue;
    base.micro_batch = static_cast<int>(mb);
    const int m_steps = per_replica / base.micro_batch;
    for (const bool sp : {false, true}) {
      if (sp && (base.tp == 1 || m.seq % base.tp != 0)) continue;
      base.sequence_parallel = sp;
      for (int zero = 0; zero <= (base.dp > 1 ? 3 : 0); ++zero) {
        base.zero_stage = zero;
        for (const Recompute r : recomputes) {
          base.recompute = r;
          base.schedule = ScheduleKind::k1F1B;
          base.chunks = 1;
          out.push_back(base);
          if (base.pp == 1) continue;
          base.schedule = ScheduleKind::kGpipe;
          out.push_back(base);
          base.schedule = ScheduleKind::kInterleaved;
          // A chunk holds at least one layer: more chunks than layers per stage cannot split the model.
          const int most_chunks = std::min(o.max_chunks, m.layers / base.pp);
          for (int v = 2; v <= most_chunks; ++v) {
            if (m.layers % (base.pp * v) != 0 || m_steps % base.pp != 0) continue;
            base.chunks = v;
            out.push_back(base);
          }
        }
      }
    }
  }
}

bool valid(const TransformerConfig& m, const ParallelPlan& p) {
  try {
    validate_plan(m, p, world_size(p));
    return true;
  } catch (const InputError&) {
    return false;
  }
}

// The memory-saving kinds a search tries when no plan fits (search.hpp), in order.
enum class Saving : std::uint8_t { kAdam8bit, kOffloadOptimizer, kOffloadParams, kOffloadAll };
constexpr std::array kSavings = {Saving::kAdam8bit, Saving::kOffloadOptimizer, Saving::kOffloadParams,
                                 Saving::kOffloadAll};

std::string_view saving_name(Saving s) {
  switch (s) {
    case Saving::kAdam8bit: return "adam8bit";
    case Saving::kOffloadOptimizer: return "offload-optimizer";
    case Saving::kOffloadParams: return "offload-optimizer+params";
    case Saving::kOffloadAll: return "offload-all";
  }
  return "?";
}

std::string_view saving_text(Saving s) {
  switch (s) {
    case Saving::kAdam8bit: return "8-bit optimizer states (--optimizer adam8bit)";
    case Saving::kOffloadOptimizer: return "the optimizer offloaded to host memory (--offload-optimizer cpu)";
    case Saving::kOffloadParams:
      return "optimizer and parameters offloaded to host memory (--offload-optimizer cpu --offload-params cpu)";
    case Saving::kOffloadAll:
      return "optimizer, parameters and activations offloaded to host memory (--offload-optimizer cpu "
             "--offload-params cpu --offload-activations)";
  }
  return "?";
}

// The plain plans made over into one memory-saving kind: with one replica ZeRO 0 becomes the stage the
// offload needs (2 for the optimizer, 3 for parameters); with more, the plans already at that stage are taken.
std::vector<ParallelPlan> saving_plans(const TransformerConfig& m, const std::vector<ParallelPlan>& plain, Saving s) {
  std::vector<ParallelPlan> out;
  for (ParallelPlan p : plain) {
    if (s == Saving::kAdam8bit) {
      if (p.optimizer != Optimizer::kAdam && p.optimizer != Optimizer::kAdamW) return {};
      p.optimizer = Optimizer::kAdam8bit;
    } else {
      const int stage = s == Saving::kOffloadOptimizer ? 2 : 3;
      if (p.zero_stage == 0) {
        if (p.dp > 1) continue;  // the plan at the stage is enumerated too
        p.zero_stage = stage;
      } else if (stage == 3 && p.zero_stage != 3) {
        continue;
      }
      p.offload_optimizer = OffloadDevice::kCpu;
      if (s != Saving::kOffloadOptimizer) p.offload_params = OffloadDevice::kCpu;
      p.offload_activations = s == Saving::kOffloadAll;
    }
    if (valid(m, p)) out.push_back(p);
  }
  return out;
}

std::string loses_by(const PlanEstimate& e, const PlanEstimate& best) {
  if (e.tokens_per_s >= 0.99 * best.tokens_per_s) return "within 1% of the best";
  const double compute = (e.compute - best.compute).value();
  const double comm = (e.exposed_comm - best.exposed_comm).value();
  const double bubble = (e.bubble - best.bubble).value();
  if (comm >= compute && comm >= bubble) return "communication-bound";
  if (bubble >= compute) return "bubble-bound";
  return "compute-heavy";
}

// The data-parallel sizes that the tp x pp layouts dividing the model leave of `gpus` GPUs.
std::vector<int> layout_dps(const TransformerConfig& m, int gpus) {
  std::vector<int> out;
  for (const int tp : divisors(gpus)) {
    if (m.heads % tp != 0 || m.kv_heads % tp != 0 || m.ffn % tp != 0) continue;
    for (const int pp : divisors(gpus / tp)) {
      if (m.layers % pp == 0) out.push_back(gpus / (tp * pp));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// "258 (dp 6)": a global batch and the data-parallel sizes of its valid plans.
std::string batch_with_dps(const TransformerConfig& m, int gpus, const SearchOptions& o, int batch) {
  SearchOptions with = o;
  with.global_batch = batch;
  std::vector<int> dps;
  for (const ParallelPlan& p : enumerate_plans(m, gpus, with)) dps.push_back(p.dp);
  std::sort(dps.begin(), dps.end());
  dps.erase(std::unique(dps.begin(), dps.end()), dps.end());
  std::string text;
  for (const int dp : dps) text += fmt::format("{}{}", text.empty() ? "" : ", ", dp);
  return dps.empty() ? std::string() : fmt::format("{} (dp {})", batch, text);
}

// The CPUs this process may run on (taskset, a Slurm allocation's cpuset), else the machine's.
unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1U, std::thread::hardware_concurrency());
}

// Every plan's estimate, in the plans' order, on `threads` threads (0: one per usable CPU). The
// plans come in runs of one layout (dp, tp, pp), whose shapes an evaluator's caches keep: a thread
// takes a whole run at a time, with an evaluator of its own, and goes through it by program shape
// (sp, ZeRO stage, schedule and chunks: the plans between differ in recompute and micro-batch size,
// whose coarse programs are the same or resized), so the evaluator keeps only the latest few programs.
// An estimate depends only on its plan, so the result is the same on any number of threads.
std::vector<PlanEstimate> estimate_all(PlanEvaluator& evaluator, const std::vector<ParallelPlan>& plans,
                                       int threads) {
  std::vector<std::size_t> runs;  // where each layout's run starts
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const bool same = i > 0 && plans[i].dp == plans[i - 1].dp && plans[i].tp == plans[i - 1].tp &&
                      plans[i].pp == plans[i - 1].pp;
    if (!same) runs.push_back(i);
  }
  runs.push_back(plans.size());
  std::vector<std::size_t> order(plans.size());
  for (std::size_t k = 0; k + 1 < runs.size(); ++k) {
    const auto begin = order.begin() + static_cast<std::ptrdiff_t>(runs[k]);
    const auto end = order.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]);
    std::iota(begin, end, runs[k]);
    const auto shape = [&](std::size_t i) {
      const ParallelPlan& p = plans[i];
      return std::make_tuple(p.sequence_parallel, p.zero_stage, p.schedule, p.chunks);
    };
    std::stable_sort(begin, end, [&](std::size_t a, std::size_t b) { return shape(a) < shape(b); });
  }
  // The longest runs first, so that no thread is left with a long one at the end: a run's cost grows
  // with its plans and with the square of its stages (more stages, and more microbatches per simulation).
  std::vector<std::size_t> longest_first(runs.size() - 1);
  std::iota(longest_first.begin(), longest_first.end(), std::size_t{0});
  const auto weight = [&](std::size_t k) {
    const auto pp = static_cast<double>(plans[runs[k]].pp);
    return static_cast<double>(runs[k + 1] - runs[k]) * pp * pp;
  };
  std::stable_sort(longest_first.begin(), longest_first.end(),
                   [&](std::size_t a, std::size_t b) { return weight(a) > weight(b); });
  const unsigned hardware = usable_cpus();
  const std::size_t workers =
      std::min<std::size_t>(threads > 0 ? static_cast<std::size_t>(threads) : hardware, runs.size() - 1);
  std::vector<PlanEstimate> out(plans.size());
  std::atomic<std::size_t> next_run{0};
  std::vector<std::exception_ptr> failed(std::max<std::size_t>(workers, 1));
  const auto work = [&](PlanEvaluator& e, std::size_t w) {
    try {
      for (std::size_t n = next_run++; n < longest_first.size(); n = next_run++) {
        const std::size_t k = longest_first[n];
        for (std::size_t j = runs[k]; j < runs[k + 1]; ++j) out[order[j]] = e.estimate(plans[order[j]]);
      }
    } catch (...) {
      failed[w] = std::current_exception();
      next_run = longest_first.size();  // the others stop after their run
    }
  };
  std::vector<std::unique_ptr<PlanEvaluator>> siblings;
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) {
    siblings.push_back(evaluator.sibling());
    pool.emplace_back(work, std::ref(*siblings.back()), w);
  }
  work(evaluator, 0);
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& f : failed) {
    if (f) std::rethrow_exception(f);
  }
  return out;
}

}  // namespace

std::string batch_hint(const TransformerConfig& m, int gpus, const SearchOptions& o) {
  const std::int64_t batch = o.global_batch;
  std::optional<int> below;
  std::optional<int> above;
  for (const int dp : layout_dps(m, gpus)) {
    for (const std::int64_t candidate : {batch / dp * dp, (batch / dp + 1) * dp}) {
      if (candidate < 1 || candidate == batch || candidate > std::numeric_limits<int>::max()) continue;
      if (batch_with_dps(m, gpus, o, static_cast<int>(candidate)).empty()) continue;
      std::optional<int>& side = candidate < batch ? below : above;
      const bool nearer = !side || (candidate < batch ? candidate > *side : candidate < *side);
      if (nearer) side = static_cast<int>(candidate);
    }
  }
  std::string batches;
  for (const std::optional<int>& b : {below, above}) {
    if (b) batches += fmt::format("{}{}", batches.empty() ? "" : " or ", batch_with_dps(m, gpus, o, *b));
  }
  if (batches.empty()) return {};
  return fmt::format("the nearest global batches that use all {} GPUs: {} (--global-batch)", gpus, batches);
}

std::string largest_dp_hint(const TransformerConfig& m, int gpus, const SearchOptions& o) {
  const std::vector<int> dps = layout_dps(m, gpus);
  if (dps.empty() || o.global_batch % dps.back() == 0) return {};
  const int dp = dps.back();
  const int below = o.global_batch / dp * dp;
  const std::string batches =
      below > 0 ? fmt::format("{} or {}", below, below + dp) : fmt::format("{}", below + dp);
  return fmt::format(
      "global batch {} does not split over dp {}, the most data parallelism {} GPUs give this model: its plans "
      "take more tensor or pipeline parallelism instead; {} would (--global-batch)",
      o.global_batch, dp, gpus, batches);
}

namespace {

// The plans of `gpus` ranks with context parallelism `cp` (1: none), appended to `out`.
void enumerate_layouts(const TransformerConfig& m, int gpus, int cp, const SearchOptions& o,
                       std::vector<ParallelPlan>& out) {
  for (const int tp : divisors(gpus / cp)) {
    if (m.heads % tp != 0 || m.kv_heads % tp != 0 || m.ffn % tp != 0) continue;
    for (const int pp : divisors(gpus / cp / tp)) {
      if (m.layers % pp != 0) continue;
      ParallelPlan p;
      p.tp = tp;
      p.pp = pp;
      p.cp = cp;
      p.cp_comm = cp > 1 ? o.cp_comm : CpCommType::kP2p;
      p.dp = gpus / (cp * tp * pp);
      if (o.global_batch % p.dp != 0) continue;
      p.global_batch = o.global_batch;
      p.flash_attention = o.flash_attention;
      p.kernels = o.kernels;
      p.optimizer = o.optimizer;
      p.lora = o.lora;
      p.fp8 = o.fp8;
      p.fp8_dispatch = o.fp8_dispatch;
      p.overlap_grad_reduce = o.overlap_grad_reduce;
      p.framework = o.framework;
      p.order = o.order;
      p.bucket_bytes = ParallelPlan{}.bucket_bytes;
      // A model with experts: every expert-parallel size that divides its experts and a stage's tp x cp x dp
      // ranks (the experts' layout folds cp in), with each expert-tensor-parallel size asked for (--etp; 1 by
      // default) whose product with it divides them.
      const int stage_ranks = tp * cp * p.dp;
      for (const int ep : divisors(m.moe.enabled() ? std::gcd(m.moe.experts, stage_ranks) : 1)) {
        p.ep = ep;
        for (const int etp : m.moe.enabled() ? o.etp : std::vector<int>{1}) {
          if (etp < 1 || stage_ranks % (etp * ep) != 0) continue;
          p.etp = etp;
          std::vector<ParallelPlan> variants;
          add_variants(m, p, o, variants);
          for (const ParallelPlan& v : variants) {
            if (valid(m, v)) out.push_back(v);
          }
        }
      }
    }
  }
}

// Sizes asked for that no plan can take are refused as plan refuses them, naming the flag: --etp 2 for a model
// with biases or with --fp8, --cp 2 without fused attention or with eager kernels or LoRA. The search enumerated
// none of their plans and blamed the layouts ("no dp x tp x pp of these GPUs divides the model"); a dense model's
// --etp 2 was dropped with no word. The smallest size of each list stands for the list: 1 among them is a valid ask.
void check_asked_sizes(const TransformerConfig& m, const SearchOptions& o) {
  if (!o.etp.empty()) validate_expert_tensor_parallel(m, *std::min_element(o.etp.begin(), o.etp.end()), o.fp8);
  if (o.cp.empty()) return;
  ParallelPlan probe;
  probe.cp = *std::min_element(o.cp.begin(), o.cp.end());
  probe.flash_attention = o.flash_attention;
  probe.kernels = o.kernels;
  probe.lora = o.lora;
  validate_context_options(probe);
}

}  // namespace

std::vector<ParallelPlan> enumerate_plans(const TransformerConfig& m, int gpus, const SearchOptions& o) {
  if (o.global_batch < 1)
    throw InputError("--global-batch", fmt::format("{}", o.global_batch), "a positive number of sequences");
  check_asked_sizes(m, o);
  std::vector<ParallelPlan> out;
  for (const int cp : o.cp) {
    if (cp < 1 || gpus % cp != 0) continue;
    enumerate_layouts(m, gpus, cp, o, out);
  }
  return out;
}

namespace {

// The fitting plans of each evaluator (memory_only's estimates) that are worth simulating, simulated: (evaluator,
// estimate) in the plans' order; the rest into r.bounded_out (search.hpp). A plan's step is at least its compute bound
// (PlanEvaluator::step_lower_bound). Plans are simulated least bound first, in rounds, until the next plan's
// bound is above the limit: the K-th best step simulated (K the plans listed) or, if longer, the best over 0.99.
// A plan above it is slower than K simulated plans and not within 1% of the best, whatever its simulation would
// give, so the top K, the best plan and the plans within 1% of it are those of simulating all. Which plans are
// simulated depends on the plans alone, not on the threads. Only where one order ranks every plan, its step's:
// by throughput (every plan takes the same tokens a step), or by cost with one GPU count.
std::vector<std::pair<std::size_t, PlanEstimate>> estimate_bounded(const std::vector<PlanEvaluator*>& evaluators,
                                                                   std::vector<std::vector<PlanEstimate>>& fitting,
                                                                   const SearchOptions& o, SearchResult& r) {
  const bool bounding = o.rank_by == RankBy::kThroughput || evaluators.size() == 1;
  struct Candidate {
    Seconds bound;
    std::size_t evaluator = 0, plan = 0;
  };
  std::vector<Candidate> candidates;
  for (std::size_t e = 0; e < evaluators.size(); ++e) {
    for (std::size_t i = 0; i < fitting[e].size(); ++i) {
      candidates.push_back({bounding ? evaluators[e]->step_lower_bound(fitting[e][i].plan) : Seconds(0.0), e, i});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.bound < b.bound; });
  std::vector<std::vector<std::optional<PlanEstimate>>> estimates(evaluators.size());
  for (std::size_t e = 0; e < evaluators.size(); ++e) estimates[e].resize(fitting[e].size());
  // Simulates the candidates in [begin, end), each evaluator's in its plans' order (a layout's plans together:
  // estimate_all).
  const auto simulate = [&](std::size_t begin, std::size_t end) {
    for (std::size_t e = 0; e < evaluators.size(); ++e) {
      std::vector<std::size_t> chosen;
      for (std::size_t c = begin; c < end; ++c) {
        if (candidates[c].evaluator == e) chosen.push_back(candidates[c].plan);
      }
      std::sort(chosen.begin(), chosen.end());
      std::vector<ParallelPlan> plans;
      for (const std::size_t i : chosen) plans.push_back(fitting[e][i].plan);
      std::vector<PlanEstimate> out = estimate_all(*evaluators[e], plans, o.threads);
      for (std::size_t k = 0; k < chosen.size(); ++k) estimates[e][chosen[k]] = std::move(out[k]);
    }
  };
  // In rounds, least bound first, each twice the last: the limit falls as better plans are found.
  const auto top = static_cast<std::size_t>(std::max(o.top, 1));
  std::vector<double> steps;
  Seconds limit(std::numeric_limits<double>::infinity());
  std::size_t next = 0;
  for (std::size_t round = 4 * top; next < candidates.size() && candidates[next].bound <= limit; round *= 2) {
    std::size_t end = bounding ? std::min(candidates.size(), next + round) : candidates.size();
    while (end > next && candidates[end - 1].bound > limit) --end;
    simulate(next, end);
    for (std::size_t c = next; c < end; ++c)
      steps.push_back(estimates[candidates[c].evaluator][candidates[c].plan]->step_time.value());
    next = end;
    std::sort(steps.begin(), steps.end());
    if (steps.size() >= top) limit = Seconds(std::max(steps[top - 1], steps.front() / 0.99));
  }
  r.bound_limit = limit;
  std::vector<std::pair<std::size_t, PlanEstimate>> out;
  for (std::size_t e = 0; e < evaluators.size(); ++e) {
    for (std::size_t i = 0; i < fitting[e].size(); ++i) {
      if (estimates[e][i]) out.emplace_back(e, std::move(*estimates[e][i]));
    }
  }
  for (const Candidate& c : candidates) {  // least bound first
    if (!estimates[c.evaluator][c.plan]) {
      r.bounded_out.push_back({std::move(fitting[c.evaluator][c.plan]), c.bound});
    }
  }
  return out;
}

}  // namespace

SearchResult search_plans(const std::vector<PlanEvaluator*>& evaluators, const SearchOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  SearchResult r;
  std::vector<std::vector<PlanEstimate>> fitting_by_evaluator;
  for (PlanEvaluator* evaluator : evaluators) {
    const Target& t = evaluator->target();
    const int gpus = evaluator->gpus();
    r.cluster = t.cluster.name;
    r.full_simulation = evaluator->model().moe.enabled();
    r.context_parallel = std::any_of(o.cp.begin(), o.cp.end(), [](int cp) { return cp > 1; });
    r.gpus.push_back(gpus);
    r.cost_by_gpus[gpus] = cluster_cost(t.cluster, gpus, o.costs);
    std::vector<PlanEstimate> fitting;
    const auto check = [&](const std::vector<ParallelPlan>& plans) {
      for (const ParallelPlan& plan : plans) {
        ++r.candidates;
        PlanEstimate e = evaluator->memory_only(plan);
        if (e.fits) {
          fitting.push_back(std::move(e));
        } else {
          r.not_fitting.push_back(std::move(e));
        }
      }
    };
    const std::vector<ParallelPlan> plain = enumerate_plans(evaluator->model(), gpus, o);
    check(plain);
    // Where no memory-saving plan fits either, the plans as asked are what the search reports (their count,
    // the closest of them), and a note says the savings were tried.
    const auto plain_candidates = r.candidates;
    const std::size_t plain_not_fitting = r.not_fitting.size();
    for (std::size_t k = 0; fitting.empty() && o.memory_saving && k < kSavings.size(); ++k) {
      check(saving_plans(evaluator->model(), plain, kSavings[k]));
      if (fitting.empty()) continue;
      r.memory_saving[gpus] = std::string(saving_name(kSavings[k]));
      r.notes.push_back(fmt::format("no plan of {} GPU{} fits as asked: the plans ranked use {}", gpus,
                                    gpus == 1 ? "" : "s", saving_text(kSavings[k])));
      if (kSavings[k] != Saving::kAdam8bit) {
        r.notes.push_back(
            "offload's step time: the optimizer's update on the host (gradients copied over PCIe, CPU Adam, "
            "weights copied back) after the backward, and the parameters' and activations' copies over PCIe "
            "during it");
      }
    }
    if (fitting.empty() && r.candidates > plain_candidates) {
      r.candidates = plain_candidates;
      r.not_fitting.resize(plain_not_fitting);
      r.notes.push_back(fmt::format("no plan of {} GPU{} fits with 8-bit optimizer states or offload to host memory "
                                    "either (--no-memory-saving skips trying them)",
                                    gpus, gpus == 1 ? "" : "s"));
    }
    r.fitting += fitting.size();
    fitting_by_evaluator.push_back(std::move(fitting));
  }
  for (auto& [e, plan] : estimate_bounded(evaluators, fitting_by_evaluator, o, r)) {
    const int gpus = evaluators[e]->gpus();
    RankedPlan ranked{std::move(plan), "", {}, {}};
    ranked.usd_per_million_tokens = usd_per_million_tokens(r.cost_by_gpus[gpus], ranked.estimate.tokens_per_s);
    ranked.joules_per_token = joules_per_token(r.cost_by_gpus[gpus], ranked.estimate.tokens_per_s);
    r.ranked.push_back(std::move(ranked));
  }
  for (PlanEvaluator* evaluator : evaluators) {
    if (r.candidates == 0) {
      const std::string hint = batch_hint(evaluator->model(), evaluator->gpus(), o);
      if (!hint.empty()) r.batch_hint += fmt::format("{}{}", r.batch_hint.empty() ? "" : "; ", hint);
    } else {
      const std::string hint = largest_dp_hint(evaluator->model(), evaluator->gpus(), o);
      if (!hint.empty()) r.notes.push_back(hint);
    }
  }
  const auto better = [&](const RankedPlan& a, const RankedPlan& b) {
    if (o.rank_by == RankBy::kCost && a.usd_per_million_tokens && b.usd_per_million_tokens) {
      return *a.usd_per_million_tokens < *b.usd_per_million_tokens;
    }
    return a.estimate.tokens_per_s > b.estimate.tokens_per_s;
  };
  std::stable_sort(r.ranked.begin(), r.ranked.end(), better);
  std::stable_sort(r.not_fitting.begin(), r.not_fitting.end(),
                   [](const PlanEstimate& a, const PlanEstimate& b) { return a.memory < b.memory; });
  if (!r.not_fitting.empty()) r.reasons["does not fit"] = r.not_fitting.size();
  if (!r.bounded_out.empty()) r.reasons[std::string(kBoundedOut)] = r.bounded_out.size();
  for (std::size_t i = 1; i < r.ranked.size(); ++i) {
    r.ranked[i].reason = loses_by(r.ranked[i].estimate, r.ranked.front().estimate);
    ++r.reasons[r.ranked[i].reason];
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return r;
}

std::string describe_plan(const ParallelPlan& p) {
  std::string s =
      fmt::format("dp {} tp {} pp {}{}{}{} {}", p.dp, p.tp, p.pp, p.ep > 1 ? fmt::format(" ep {}", p.ep) : "",
                  p.etp > 1 ? fmt::format(" etp {}", p.etp) : "",
                  p.cp > 1 ? fmt::format(" cp {} {}", p.cp, name(p.cp_comm)) : "", name(p.schedule));
  if (p.chunks > 1) s += fmt::format(" x{}", p.chunks);
  s += fmt::format(" mb {} zero {} recompute {}", p.micro_batch, p.zero_stage, name(p.recompute));
  if (p.sequence_parallel) s += " sp";
  if (p.flash_attention) s += " flash";
  if (p.kernels != KernelSet::kFused) s += fmt::format(" {} kernels", name(p.kernels));
  if (p.optimizer == Optimizer::kAdam8bit) s += " adam8bit";
  if (p.offload_optimizer != OffloadDevice::kNone) s += " offload-opt";
  if (p.offload_params != OffloadDevice::kNone) s += " offload-params";
  if (p.offload_activations) s += " offload-act";
  if (p.lora.enabled()) s += fmt::format(" lora r{}{}", p.lora.rank, p.lora.base_bits == 4 ? " nf4" : "");
  if (p.fp8 != Fp8Recipe::kNone) s += fmt::format(" fp8 {}", name(p.fp8));
  if (p.fp8_dispatch) s += " fp8-dispatch";
  return s;
}

std::string plan_flags(const ParallelPlan& p) {
  std::string s =
      fmt::format("--dp {} --tp {} --pp {} --micro-batch {} --global-batch {} --zero {} --recompute {} --schedule {}",
                  p.dp, p.tp, p.pp, p.micro_batch, p.global_batch, p.zero_stage, name(p.recompute), name(p.schedule));
  if (p.chunks > 1) s += fmt::format(" --chunks {}", p.chunks);
  if (p.ep > 1) s += fmt::format(" --ep {}", p.ep);
  if (p.etp > 1) s += fmt::format(" --etp {}", p.etp);
  if (p.cp > 1) s += fmt::format(" --cp {} --cp-comm-type {}", p.cp, name(p.cp_comm));
  if (p.sequence_parallel) s += " --sp";
  s += p.flash_attention ? " --flash-attn" : " --no-flash-attn";  // explicit: the default has changed before
  if (p.kernels != KernelSet::kFused) s += fmt::format(" --kernels {}", name(p.kernels));
  if (p.order != ParallelPlan{}.order) s += " --order " + p.order;
  if (p.optimizer == Optimizer::kAdam8bit) s += " --optimizer adam8bit";  // (the search's own optimizer otherwise)
  if (p.offload_optimizer != OffloadDevice::kNone) {
    s += fmt::format(" --offload-optimizer {}", name(p.offload_optimizer));
  }
  if (p.offload_params != OffloadDevice::kNone) s += fmt::format(" --offload-params {}", name(p.offload_params));
  if (p.offload_activations) s += " --offload-activations";
  if (p.lora.enabled()) {
    s += fmt::format(" --lora-rank {} --lora-base-bits {} --lora-targets {}", p.lora.rank, p.lora.base_bits,
                     name(p.lora.targets));
  }
  if (p.fp8 != Fp8Recipe::kNone) s += fmt::format(" --fp8 {}", name(p.fp8));
  if (p.fp8_dispatch) s += " --fp8-dispatch";
  return s;
}

}  // namespace commscale::predict

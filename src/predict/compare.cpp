#include "predict/compare.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "predict/gpu_support.hpp"

namespace commscale::predict {
namespace {

template <class T>
std::optional<double> find(const std::map<std::string, double>& prices, const T& key) {
  const auto it = prices.find(key);
  return it == prices.end() ? std::nullopt : std::optional<double>(it->second);
}

// The assumptions for one cluster with the user's prices for it; `label` (the entry as --clusters names
// it) is empty for the points of a scaling sweep, which no entry price fits.
CostAssumptions costs_for(const CompareInputs& in, const hw::ClusterSpec& cluster, const std::string& label) {
  CostAssumptions c = in.search.costs;
  const UserPrices& p = in.prices;
  if (!label.empty()) c.entry_price_usd = find(p.entries, label);
  c.node_price_usd = find(p.nodes, cluster.name);
  c.gpu_price_usd = find(p.gpus, cluster.gpu.name);
  c.usd_per_gpu_hour = find(p.gpu_hours, cluster.name);
  if (!c.usd_per_gpu_hour) c.usd_per_gpu_hour = find(p.gpu_hours, cluster.gpu.name);
  return c;
}

// The inputs as the cluster's GPU runs them (gpu_support.hpp): its notes say what changed.
CompareInputs fitted_to(const CompareInputs& in, const hw::ClusterSpec& cluster, std::vector<std::string>* notes) {
  TrainingChoices choices{in.model.dtype, in.dtype_flag, in.search.flash_attention, in.flash_flag, in.search.fp8, true};
  *notes = cluster.what_if_notes;
  for (std::string& note : fit_to_gpu(cluster.gpu, choices)) notes->push_back(std::move(note));
  CompareInputs out = in;
  out.model.dtype = choices.dtype;
  out.search.flash_attention = choices.flash_attention;
  out.search.fp8 = choices.fp8;
  out.search.fp8_dispatch = in.search.fp8_dispatch && choices.fp8 != Fp8Recipe::kNone;  // bf16 rows where no FP8
  return out;
}

// The best plan for `gpus` GPUs of the cluster, by the stage model; the search's counts in `entry`.
std::optional<PlanEstimate> best_plan(const hw::Catalog& catalog, const hw::ClusterSpec& cluster, int gpus,
                                      const CompareInputs& in, CompareEntry* entry) {
  const int nodes = nodes_for(cluster, gpus, "--clusters");
  const Target target = make_target(catalog, cluster, nodes, in.calibration, in.host);
  PlanEvaluator evaluator(in.model, target, in.search.memory, gpus);
  SearchOptions options = in.search;
  options.costs = costs_for(in, cluster, {});
  const SearchResult r = search_plans({&evaluator}, options);
  if (entry != nullptr) {
    entry->candidates = r.candidates;
    entry->fitting = r.fitting;
    if (r.ranked.empty() && !r.not_fitting.empty()) {
      entry->closest = describe_plan(r.not_fitting.front().plan) + ": " + r.not_fitting.front().fit_message;
    }
    entry->batch_hint = r.batch_hint;
    for (const std::string& note : r.notes) entry->notes.push_back(note);
  }
  if (r.ranked.empty()) return std::nullopt;
  return r.ranked.front().estimate;
}

CompareEntry compare_one(const hw::Catalog& catalog, const ClusterChoice& choice, const std::string& label,
                         const CompareInputs& given) {
  const hw::ClusterSpec cluster = catalog.cluster(choice.cluster, "--clusters", given.overrides);
  CompareEntry e;
  const CompareInputs in = fitted_to(given, cluster, &e.notes);
  e.label = label;
  e.cluster = cluster.name;
  e.gpu = cluster.gpu.name;
  e.gpus = choice.gpus > 0 ? choice.gpus : cluster.gpus_per_node();
  e.nodes = nodes_for(cluster, e.gpus, "--clusters");
  e.cost = cluster_cost(cluster, e.gpus, costs_for(in, cluster, label.substr(0, label.find(" ["))));
  e.best = best_plan(catalog, cluster, e.gpus, in, &e);
  if (!e.best) return e;
  const Target target = make_target(catalog, cluster, e.nodes, in.calibration, in.host);
  // The search's plans passed validate_plan in its enumeration; CheckedPlan says so again, cheaply.
  e.prediction = predict_step(prepare_for(CheckedPlan(in.model, e.best->plan), target, in.search.memory), target);
  const double tokens = e.prediction->summary.tokens_per_s;
  e.usd_per_million_tokens = usd_per_million_tokens(e.cost, tokens);
  e.joules_per_token = joules_per_token(e.cost, tokens);
  return e;
}

}  // namespace

ClusterChoice parse_cluster_choice(const std::string& text, const std::string& where) {
  ClusterChoice c;
  const std::size_t colon = text.rfind(':');
  c.cluster = text.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string count = text.substr(colon + 1);
    std::size_t used = 0;
    try {
      c.gpus = std::stoi(count, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != count.size() || c.gpus < 1) {
      throw InputError(where, fmt::format("\"{}\"", text), "CLUSTER or CLUSTER:GPUS with a positive number of GPUs");
    }
  }
  if (c.cluster.empty()) throw InputError(where, fmt::format("\"{}\"", text), "a cluster name or file");
  return c;
}

std::vector<int> scaling_sizes(const hw::ClusterSpec& cluster, int max_gpus) {
  const int node = cluster.gpus_per_node();
  std::vector<int> out;
  for (int n = 1; n < node && n <= max_gpus; n *= 2) out.push_back(n);
  const int most = cluster.network ? max_gpus : std::min(max_gpus, node);
  for (long n = node; n <= most; n *= 2) out.push_back(static_cast<int>(n));
  return out;
}

CompareResult compare_clusters(const hw::Catalog& catalog, const CompareInputs& in, const CompareProgress& progress) {
  CompareResult r;
  r.model = in.model.name;
  std::optional<hw::ClusterSpec> swept;
  std::vector<int> sizes;
  if (in.scaling) {
    swept = catalog.cluster(in.scaling->cluster, "--scaling", in.overrides);
    sizes = scaling_sizes(*swept, in.scaling_max_gpus);
  }
  const CompareInputs scaled = swept ? fitted_to(in, *swept, &r.notes) : in;
  const std::size_t searches = in.clusters.size() + sizes.size();
  std::size_t done = 0;
  const auto starting = [&](const std::string& next) {
    if (progress) progress(done++, searches, next);
  };
  for (std::size_t i = 0; i < in.clusters.size(); ++i) {
    starting(in.labels[i]);
    r.entries.push_back(compare_one(catalog, in.clusters[i], in.labels[i], in));
  }
  if (!swept) return r;
  const hw::ClusterSpec& cluster = *swept;
  r.scaling_cluster = cluster.name;
  const PlanEstimate* first = nullptr;
  for (const int gpus : sizes) {
    starting(fmt::format("scaling {}: {} GPU{}", cluster.name, gpus, gpus == 1 ? "" : "s"));
    ScalingPoint point;
    point.gpus = gpus;
    point.best = best_plan(catalog, cluster, gpus, scaled, nullptr);
    if (point.best) {
      point.usd_per_million_tokens =
          usd_per_million_tokens(cluster_cost(cluster, gpus, costs_for(in, cluster, {})), point.best->tokens_per_s);
    }
    r.scaling.push_back(point);
  }
  int first_gpus = 0;
  for (const ScalingPoint& p : r.scaling) {
    if (p.best && first == nullptr) {
      first = &*p.best;
      first_gpus = p.gpus;
    }
  }
  for (ScalingPoint& p : r.scaling) {
    if (p.best && first != nullptr) {
      p.efficiency = (p.best->tokens_per_s / p.gpus) / (first->tokens_per_s / first_gpus);
    }
  }
  return r;
}

}  // namespace commscale::predict

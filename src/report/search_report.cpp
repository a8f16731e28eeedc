// The search result as JSON and as text (search.hpp).

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_optional.hpp"
#include "program/step_summary.hpp"
#include "report/search_report.hpp"

namespace commscale::predict {
namespace {

// The JSON's "method": how the plans were estimated (search.hpp, SearchResult::full_simulation).
constexpr std::string_view kStageModelMethod =
    "stage model (src/predict/stage_model.hpp): each plan's step simulated one op per unit";
constexpr std::string_view kFullMethod = "full simulation of each plan that fits (a model with experts)";
constexpr std::string_view kMixedMethod =
    "stage model for the plans without context parallelism, full simulation of each plan with it that fits";

nlohmann::json ranked_json(const RankedPlan& r) {
  nlohmann::json j = plan_estimate_json(r.estimate);
  j["loses_by"] = r.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reason);
  j["usd_per_million_tokens"] = optional_json(r.usd_per_million_tokens);
  j["joules_per_token"] = optional_json(r.joules_per_token);
  return j;
}

std::string percent(Seconds part, Seconds whole) {
  return whole.value() > 0 ? fmt::format("{:.0f}%", 100 * (part / whole)) : "-";
}

}  // namespace

nlohmann::json plan_estimate_json(const PlanEstimate& e) {
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [name, t] : e.groups) groups[name] = {{"busy_s", t.busy.value()}, {"exposed_s", t.exposed.value()}};
  nlohmann::json j = {{"plan", plan_to_json(e.plan)},
                      {"world_size", world_size(e.plan)},
                      {"fits", e.fits},
                      {"max_memory_per_rank_bytes", e.memory.count()}};
  if (!e.estimated) {
    j["fit_message"] = e.fit_message;
    return j;
  }
  j["step_time_s"] = e.step_time.value();
  j["compute_s"] = e.compute.value();
  j["exposed_comm_s"] = e.exposed_comm.value();
  j["bubble_s"] = e.bubble.value();
  j["groups"] = groups;
  j["tokens_per_s"] = e.tokens_per_s;
  j["mfu"] = e.mfu;
  j["hfu"] = e.hfu;
  return j;
}

PlanEstimate plan_estimate_from_json(const JsonAt& in) {
  PlanEstimate e;
  e.plan = plan_from_json(in.at("plan"));
  e.fits = in.flag_or("fits", false);
  e.memory = Bytes(static_cast<std::uint64_t>(in.number_or("max_memory_per_rank_bytes", 0.0)));
  e.fit_message = in.string_or("fit_message", "");
  e.estimated = in.has("step_time_s");
  if (!e.estimated) return e;
  e.step_time = Seconds(in.number("step_time_s"));
  e.compute = Seconds(in.number("compute_s"));
  e.exposed_comm = Seconds(in.number("exposed_comm_s"));
  e.bubble = Seconds(in.number("bubble_s"));
  e.groups = group_times_from_json(in);
  e.tokens_per_s = in.number_or("tokens_per_s", 0.0);
  e.mfu = in.number_or("mfu", 0.0);
  e.hfu = in.number_or("hfu", 0.0);
  return e;
}

void search_from_json(const JsonAt& in, SearchResult& r, SearchOptions& options) {
  r = SearchResult{};
  r.cluster = in.string_or("cluster", "");
  if (in.has("gpus") && in.at("gpus").value().is_array()) {
    for (const JsonAt& g : in.array("gpus")) {
      if (!g.value().is_number_integer())
        throw InputError(g.where(), fmt::format("is {}", g.value().dump()), "a number of GPUs");
      r.gpus.push_back(g.value().get<int>());
    }
  }
  r.candidates = static_cast<std::size_t>(in.number("candidates"));
  r.fitting = static_cast<std::size_t>(in.number("fitting"));
  r.seconds = in.number_or("search_seconds", 0.0);
  const std::string method = in.string_or("method", "");
  r.full_simulation = method == kFullMethod;
  r.context_parallel = method == kMixedMethod;
  for (const JsonAt& t : in.array("top")) {
    RankedPlan ranked{plan_estimate_from_json(t), t.string_or("loses_by", ""), t.optional_number("usd_per_million_tokens"),
                      t.optional_number("joules_per_token")};
    r.ranked.push_back(std::move(ranked));
  }
  const std::string rank_by = in.string_or("rank_by", "throughput");
  if (rank_by != "throughput" && rank_by != "cost")
    throw InputError(in.at("rank_by").where(), fmt::format("is \"{}\"", rank_by), "throughput or cost");
  options.rank_by = rank_by == "cost" ? RankBy::kCost : RankBy::kThroughput;
}

nlohmann::json search_to_json(const SearchResult& r, const SearchOptions& o) {
  nlohmann::json top = nlohmann::json::array();
  for (std::size_t i = 0; i < r.ranked.size() && i < static_cast<std::size_t>(o.top); ++i)
    top.push_back(ranked_json(r.ranked[i]));
  // The best plan of each reason, so that every way of losing has an example.
  nlohmann::json reasons = nlohmann::json::object();
  for (const auto& [reason, count] : r.reasons) {
    nlohmann::json example;
    if (reason == "does not fit") {
      example = plan_estimate_json(r.not_fitting.front());
    } else if (reason == kBoundedOut) {
      example = plan_estimate_json(r.bounded_out.front().memory);
      example["compute_bound_s"] = r.bounded_out.front().bound.value();
    } else {
      const auto first =
          std::find_if(r.ranked.begin(), r.ranked.end(), [&reason = reason](const RankedPlan& p) { return p.reason == reason; });
      example = ranked_json(*first);
    }
    reasons[reason] = {{"plans", count}, {"best", example}};
    if (reason == kBoundedOut) reasons[reason]["limit_step_s"] = r.bound_limit.value();
  }
  nlohmann::json costs = nlohmann::json::object();
  for (const auto& [gpus, c] : r.cost_by_gpus) {
    costs[std::to_string(gpus)] = {{"basis", name(c.basis)},
                                   {"priced", c.priced},
                                   {"price_usd", c.priced ? nlohmann::json(c.price_usd) : nlohmann::json(nullptr)},
                                   {"price_source", c.price_source},
                                   {"power_w", c.power_w},
                                   {"power_source", c.power_source},
                                   {"usd_per_hour", c.usd_per_hour}};
  }
  nlohmann::json memory_saving = nlohmann::json::object();  // GPU count -> the saving its ranked plans use
  for (const auto& [gpus, saving] : r.memory_saving) memory_saving[std::to_string(gpus)] = saving;
  return {{"schema_version", 1},
          {"kind", "commscale-search"},
          {"cluster", r.cluster},
          {"gpus", r.gpus},
          {"rank_by", o.rank_by == RankBy::kCost ? "cost" : "throughput"},
          {"method", r.full_simulation    ? kFullMethod
                     : r.context_parallel ? kMixedMethod
                                          : kStageModelMethod},
          {"assumptions",
           {{"years", o.costs.years}, {"usd_per_kwh", o.costs.usd_per_kwh}, {"cost_basis", name(o.costs.basis)}}},
          {"candidates", r.candidates},
          {"fitting", r.fitting},
          {"search_seconds", r.seconds},
          {"top", top},
          {"reasons", reasons},
          {"costs", costs},
          {"notes", r.notes},
          {"memory_saving", memory_saving},
          {"batch_hint", r.batch_hint.empty() ? nlohmann::json() : nlohmann::json(r.batch_hint)}};
}

namespace {

// The context-parallel sizes of the layouts tried, where any is above 1: " x cp (cp 3)" (a search with --cp 3
// and none that divides the GPUs or splits the sequence into 2 x cp chunks said only dp x tp x pp).
std::string layouts_asked(const SearchOptions& o) {
  std::string sizes;
  for (const int cp : o.cp) sizes += fmt::format("{}{}", sizes.empty() ? "" : ",", cp);
  const bool context = std::any_of(o.cp.begin(), o.cp.end(), [](int cp) { return cp > 1; });
  return context ? fmt::format(" x cp (--cp {})", sizes) : "";
}

}  // namespace

void print_search(std::ostream& out, const SearchResult& r, const SearchOptions& o, std::string_view predict_flags) {
  std::string gpus;
  for (const int g : r.gpus) gpus += (gpus.empty() ? "" : ", ") + std::to_string(g);
  out << fmt::format("search   {} on {} GPUs: {} valid plans, {} fit in memory ({:.2f} s); ranked by {}; as {} runs them "
                     "(--framework)\n",
                     r.cluster, gpus, r.candidates, r.fitting, r.seconds,
                     o.rank_by == RankBy::kCost ? "cost per token" : "throughput", name(o.framework));
  for (const std::string& note : r.notes) out << "note     " << note << "\n";
  if (r.ranked.empty()) {
    if (r.candidates == 0) {
      out << "no valid plan: no dp x tp x pp" << layouts_asked(o)
          << " of these GPUs divides the model and the global batch";
      out << (r.batch_hint.empty() ? "\n" : fmt::format("; {}\n", r.batch_hint));
      return;
    }
    out << "no plan fits";
    if (!r.not_fitting.empty()) {
      out << fmt::format("; the plan that needs the least memory ({}) {}", describe_plan(r.not_fitting.front().plan),
                         r.not_fitting.front().fit_message);
    }
    out << "\n";
    return;
  }
  out << fmt::format("\n{:>4} {:>5} {:>11} {:>6} {:>9} {:>8} {:>8} {:>7} {:>9}  {}\n", "#", "GPUs", "tokens/s", "MFU",
                     "step s", "compute", "comm", "bubble", "USD/Mtok", "plan");
  for (std::size_t i = 0; i < r.ranked.size() && i < static_cast<std::size_t>(o.top); ++i) {
    const PlanEstimate& e = r.ranked[i].estimate;
    const auto& usd = r.ranked[i].usd_per_million_tokens;
    out << fmt::format("{:>4} {:>5} {:>11.0f} {:>5.1f}% {:>9.4f} {:>8} {:>8} {:>7} {:>9}  {}\n", i + 1,
                       world_size(e.plan), e.tokens_per_s, 100 * e.mfu, e.step_time.value(),
                       percent(e.compute, e.step_time), percent(e.exposed_comm, e.step_time),
                       percent(e.bubble, e.step_time), usd ? fmt::format("{:.3f}", *usd) : "n/a",
                       describe_plan(e.plan));
  }
  out << "\nwhy the others lose (the best plan of each kind)\n";
  for (const auto& [reason, count] : r.reasons) {
    if (reason == "does not fit") {
      out << fmt::format("  {:<20} {:>7} plans; closest: {} ({})\n", reason, count,
                         describe_plan(r.not_fitting.front().plan), r.not_fitting.front().fit_message);
      continue;
    }
    if (reason == kBoundedOut) {
      out << fmt::format(
          "  {:<20} {:>7} plans; least: {} (its busiest stage's compute alone takes {:.4g} s a step, "
          "more than {:.4g} s: not simulated)\n",
          reason, count, describe_plan(r.bounded_out.front().memory.plan), r.bounded_out.front().bound.value(),
          r.bound_limit.value());
      continue;
    }
    const auto first =
        std::find_if(r.ranked.begin(), r.ranked.end(), [&reason = reason](const RankedPlan& p) { return p.reason == reason; });
    out << fmt::format("  {:<20} {:>7} plans; best: {} at {:.0f} tokens/s\n", reason, count,
                       describe_plan(first->estimate.plan), first->estimate.tokens_per_s);
  }
  const auto& best_cost = r.cost_by_gpus.at(world_size(r.ranked.front().estimate.plan));
  // A rental rate includes energy: the years and the price of a kWh apply to bought systems only.
  const std::string amortized = o.costs.basis == CostBasis::kCloud
                                    ? std::string()
                                    : fmt::format("; {} years, {:.3f} USD/kWh", o.costs.years, o.costs.usd_per_kwh);
  out << fmt::format("\ncost     basis: {}: {}; {:.0f} W ({}){}\n", describe(o.costs.basis), best_cost.price_source,
                     best_cost.power_w, best_cost.power_source, amortized);
  if (r.context_parallel && !r.full_simulation) {
    out << "method   plans without context parallelism: the program builder's coarse program (one op per layer) in\n"
           "         predict's simulator; plans with it predicted in full, as predict runs them (the coarse program\n"
           "         has no context-parallel attention: src/workload/CONTEXT_PARALLEL.md)\n";
  } else if (r.full_simulation) {
    out << "method   each plan that fits predicted in full, as predict runs it (a model with experts: the coarse\n"
           "         program has no MoE layer); routing priced as balanced (src/workload/MOE.md)\n";
  } else {
    out << "method   the program builder's coarse program (one op per layer) in predict's simulator;\n"
           "         within 0.6% of the full simulation over the tests' grid of plans\n";
  }
  if (!r.bounded_out.empty()) {
    out << fmt::format(
        "bound    {} plans not simulated: a plan's step is at least its busiest stage's compute alone, and\n"
        "         theirs is longer than the steps of the {} plans listed and 1% longer than the best's\n"
        "         (--top N simulates more)\n",
        r.bounded_out.size(), o.top);
  }
  out << fmt::format("next     the full simulation of the best plan:\n  commscale predict {} {}\n", predict_flags,
                     plan_flags(r.ranked.front().estimate.plan));
}

}  // namespace commscale::predict

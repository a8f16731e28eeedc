// The comparison as JSON and as text (compare.hpp).

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "core/json_optional.hpp"
#include "report/compare_report.hpp"

namespace commscale::predict {
namespace {

std::string optional_text(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : "n/a";
}

nlohmann::json entry_json(const CompareEntry& e) {
  nlohmann::json j = {{"label", e.label},
                      {"cluster", e.cluster},
                      {"gpu", e.gpu},
                      {"gpus", e.gpus},
                      {"nodes", e.nodes},
                      {"candidates", e.candidates},
                      {"fitting", e.fitting},
                      {"price",
                       {{"basis", name(e.cost.basis)},
                        {"priced", e.cost.priced},
                        {"price_usd", e.cost.priced ? nlohmann::json(e.cost.price_usd) : nlohmann::json(nullptr)},
                        {"source", e.cost.price_source},
                        {"power_w", e.cost.power_w},
                        {"power_source", e.cost.power_source},
                        {"usd_per_hour", e.cost.usd_per_hour}}},
                      {"usd_per_million_tokens", optional_json(e.usd_per_million_tokens)},
                      {"joules_per_token", optional_json(e.joules_per_token)}};
  j["notes"] = e.notes;
  if (!e.prediction) {
    j["best"] = nullptr;
    j["closest"] = e.closest;
    if (!e.batch_hint.empty()) j["batch_hint"] = e.batch_hint;
    return j;
  }
  const Prediction& p = *e.prediction;
  std::uint64_t memory = 0;
  for (const StageMemory& s : p.memory) memory = std::max(memory, s.bytes.total().count());
  j["best"] = {{"plan", plan_to_json(p.plan)},
               {"summary", p.summary},
               {"max_memory_per_rank_bytes", memory},
               {"fits", p.fit.fits},
               {"stage_model_step_time_s", e.best->step_time.value()}};
  return j;
}

// How host power was counted, for the JSON's assumptions.
std::string host_power_rule(const CostAssumptions& c) {
  if (c.host_watts_per_node) {
    return fmt::format("GPUs at TDP plus {:g} W per node (--host-watts)", *c.host_watts_per_node);
  }
  return fmt::format("GPUs at TDP plus, per node, {} (a cluster file's host_power_W in its place)",
                     host_rule_text());
}

}  // namespace

nlohmann::json compare_to_json(const CompareResult& r, const CompareInputs& in) {
  nlohmann::json entries = nlohmann::json::array();
  for (const CompareEntry& e : r.entries) entries.push_back(entry_json(e));
  nlohmann::json doc = {{"schema_version", 1},
                        {"kind", "commscale-compare"},
                        {"model", r.model},
                        {"global_batch", in.search.global_batch},
                        {"assumptions",
                         {{"years", in.search.costs.years},
                          {"usd_per_kwh", in.search.costs.usd_per_kwh},
                          {"cost_basis", name(in.search.costs.basis)},
                          {"price", describe(in.search.costs.basis)},
                          {"power", host_power_rule(in.search.costs)}}},
                        {"clusters", entries},
                        {"warnings", r.warnings}};
  if (!r.notes.empty()) doc["scaling_notes"] = r.notes;
  if (!r.scaling_cluster.empty()) {
    nlohmann::json points = nlohmann::json::array();
    for (const ScalingPoint& p : r.scaling) {
      nlohmann::json point = {{"gpus", p.gpus}};
      if (p.best) {
        point["plan"] = plan_to_json(p.best->plan);
        point["tokens_per_s"] = p.best->tokens_per_s;
        point["mfu"] = p.best->mfu;
        point["step_time_s"] = p.best->step_time.value();
        point["scaling_efficiency"] = p.efficiency;
        point["usd_per_million_tokens"] = optional_json(p.usd_per_million_tokens);
      } else {
        point["plan"] = nullptr;
      }
      points.push_back(point);
    }
    // Efficiency is per-GPU throughput against the smallest size where a plan fits.
    const auto base = std::find_if(r.scaling.begin(), r.scaling.end(), [](const ScalingPoint& p) { return p.best; });
    doc["scaling"] = {{"cluster", r.scaling_cluster},
                      {"method", "stage model, best plan per size"},
                      {"baseline_gpus", base == r.scaling.end() ? nlohmann::json(nullptr) : nlohmann::json(base->gpus)},
                      {"points", points}};
  }
  return doc;
}

namespace {

CompareEntry entry_from_json(const JsonAt& in) {
  CompareEntry e;
  e.label = in.string_or("label", "");
  e.cluster = in.string_or("cluster", "");
  e.gpu = in.string_or("gpu", "");
  e.gpus = static_cast<int>(in.number("gpus"));
  e.nodes = static_cast<int>(in.number_or("nodes", 1));
  e.candidates = static_cast<std::size_t>(in.number_or("candidates", 0));
  e.fitting = static_cast<std::size_t>(in.number_or("fitting", 0));
  e.closest = in.string_or("closest", "");
  if (in.has("price")) {
    const JsonAt price = in.at("price");
    if (price.has("basis")) e.cost.basis = parse_cost_basis(price.string("basis"), price.at("basis").where());
    e.cost.priced = price.flag_or("priced", false);
    e.cost.price_usd = price.number_or("price_usd", 0.0);
    e.cost.price_source = price.string_or("source", "");
    e.cost.power_w = price.number_or("power_w", 0.0);
    e.cost.power_source = price.string_or("power_source", "");
    e.cost.usd_per_hour = price.number_or("usd_per_hour", 0.0);
  }
  e.usd_per_million_tokens = in.optional_number("usd_per_million_tokens");
  e.joules_per_token = in.optional_number("joules_per_token");
  if (!in.has("best")) return e;
  const JsonAt best = in.at("best");
  Prediction p;
  const JsonAt summary = best.at("summary");
  from_json(summary, p.summary);
  (void)summary.number("tokens_per_s");  // drawn: required here, unlike in a step's summary
  p.plan = plan_from_json(best.at("plan"));
  p.fit.fits = best.flag_or("fits", false);
  e.prediction = std::move(p);
  PlanEstimate estimate;
  estimate.plan = e.prediction->plan;
  estimate.estimated = best.has("stage_model_step_time_s");
  estimate.step_time = Seconds(best.number_or("stage_model_step_time_s", 0.0));
  e.best = estimate;
  return e;
}

ScalingPoint point_from_json(const JsonAt& in) {
  ScalingPoint p;
  p.gpus = static_cast<int>(in.number("gpus"));
  if (!in.has("plan")) return p;
  PlanEstimate e;
  e.plan = plan_from_json(in.at("plan"));
  e.estimated = true;
  e.tokens_per_s = in.number("tokens_per_s");
  e.mfu = in.number_or("mfu", 0.0);
  e.step_time = Seconds(in.number_or("step_time_s", 0.0));
  p.best = e;
  p.efficiency = in.number("scaling_efficiency");
  p.usd_per_million_tokens = in.optional_number("usd_per_million_tokens");
  return p;
}

}  // namespace

void compare_from_json(const JsonAt& doc, CompareResult& r, CompareInputs& in) {
  r = CompareResult{};
  r.model = doc.string_or("model", "");
  in.search.global_batch = static_cast<int>(doc.number_or("global_batch", 0));
  for (const JsonAt& c : doc.array("clusters")) r.entries.push_back(entry_from_json(c));
  if (!doc.has("scaling")) return;
  const JsonAt sc = doc.at("scaling");
  r.scaling_cluster = sc.string_or("cluster", "");
  for (const JsonAt& p : sc.array("points")) r.scaling.push_back(point_from_json(p));
}

void print_compare(std::ostream& out, const CompareResult& r, const CompareInputs& in) {
  out << fmt::format(
      "compare  {} across {} clusters, global batch {}; each with its best plan that fits, as {} runs it (--framework)\n",
      r.model, r.entries.size(), in.search.global_batch, name(in.search.framework));
  out << fmt::format("USD/Mtok on one cost basis, {}: {} (--cost-basis)\n", name(in.search.costs.basis),
                     describe(in.search.costs.basis));
  out << fmt::format("\n{:<28} {:>5} {:>11} {:>6} {:>9} {:>8} {:>10} {:>9}  {}\n", "cluster", "GPUs", "tokens/s", "MFU",
                     "step s", "mem GiB", "USD/Mtok", "J/token", "best plan");
  for (const CompareEntry& e : r.entries) {
    if (!e.prediction) {
      if (e.candidates == 0) {
        out << fmt::format(
            "{:<28} {:>5}  no valid plan: no dp x tp x pp of {} GPUs divides the model and the global "
            "batch{}\n",
            e.label, e.gpus, e.gpus, e.batch_hint.empty() ? "" : "; " + e.batch_hint);
      } else {
        out << fmt::format("{:<28} {:>5}  no plan fits ({} plans; closest: {})\n", e.label, e.gpus, e.candidates,
                           e.closest);
      }
      continue;
    }
    const Prediction& p = *e.prediction;
    double memory = 0;
    for (const StageMemory& s : p.memory) memory = std::max(memory, s.bytes.total().gib());
    out << fmt::format("{:<28} {:>5} {:>11.0f} {:>5.1f}% {:>9.4f} {:>8.1f} {:>10} {:>9}  {}\n", e.label, e.gpus,
                       p.summary.tokens_per_s, 100 * p.summary.mfu.value_or(0.0), p.summary.step_time_s, memory,
                       optional_text(e.usd_per_million_tokens, "{:.3f}"), optional_text(e.joules_per_token, "{:.3f}"),
                       describe_plan(p.plan));
  }
  // A note shared by every value of a --sweep is printed once.
  std::vector<std::string> printed;
  for (const CompareEntry& e : r.entries) {
    for (const std::string& note : e.notes) {
      const std::string line = fmt::format("{}: {}", e.label.substr(0, e.label.find(" [")), note);
      if (std::find(printed.begin(), printed.end(), line) != printed.end()) continue;
      printed.push_back(line);
      out << "note     " << line << "\n";
    }
  }
  for (const std::string& w : r.warnings) out << "warning  " << w << "\n";
  const CostAssumptions& costs = in.search.costs;
  out << fmt::format("\ncosts    basis: {}", describe(costs.basis));
  if (costs.basis != CostBasis::kCloud) {
    out << fmt::format("; over {} years + power at {:.3f} USD/kWh", costs.years, costs.usd_per_kwh);
  }
  out << "\n         (a cluster with no price on this basis shows n/a, and why: no other basis is mixed in)\n";
  for (const CompareEntry& e : r.entries) {
    out << fmt::format("         {:<28} {}{}\n", e.label, e.cost.priced ? "" : "n/a: ", e.cost.price_source);
  }
  out << "power    J/token from GPU TDP plus host power per node:\n";
  for (const CompareEntry& e : r.entries) {
    out << fmt::format("         {:<28} {:.0f} W: {}\n", e.label, e.cost.power_w, e.cost.power_source);
  }
  if (r.scaling_cluster.empty()) return;
  out << fmt::format("\nscaling  {} from {} to {} GPUs, global batch {} fixed (stage model; best plan per size)\n",
                     r.scaling_cluster, r.scaling.front().gpus, r.scaling.back().gpus, in.search.global_batch);
  for (const std::string& note : r.notes) out << "note     " << note << "\n";
  const auto base = std::find_if(r.scaling.begin(), r.scaling.end(), [](const ScalingPoint& p) { return p.best; });
  if (base != r.scaling.end()) {
    out << fmt::format(
        "         efficiency: tokens/s per GPU against the same at {} GPU{} (the smallest size that fits)\n",
        base->gpus, base->gpus == 1 ? "" : "s");
  }
  out << fmt::format("{:>6} {:>12} {:>6} {:>11} {:>10}  {}\n", "GPUs", "tokens/s", "MFU", "efficiency", "USD/Mtok",
                     "plan");
  for (const ScalingPoint& p : r.scaling) {
    if (!p.best) {
      out << fmt::format("{:>6}  no plan fits\n", p.gpus);
      continue;
    }
    out << fmt::format("{:>6} {:>12.0f} {:>5.1f}% {:>10.1f}% {:>10}  {}\n", p.gpus, p.best->tokens_per_s,
                       100 * p.best->mfu, 100 * p.efficiency, optional_text(p.usd_per_million_tokens, "{:.3f}"),
                       describe_plan(p.best->plan));
  }
}

}  // namespace commscale::predict

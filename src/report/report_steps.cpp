// Report sections for training steps: measured (`train`), predicted (`predict`, `search`), planned
// (`plan`) and the Chrome trace of a measured step.

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "report/charts.hpp"
#include "parallel/plan_summary.hpp"
#include "program/step_summary.hpp"
#include "report/html_report.hpp"
#include "report/search_report.hpp"
#include "workload/model_spec.hpp"

namespace commscale {
namespace {

// The figures of one step every view draws, from a train or predict summary or a search estimate.
struct StepFigures {
  double step_s = 0.0;
  double compute_s = 0.0;
  double exposed_s = 0.0;
  double bubble_s = 0.0;
  std::map<std::string, GroupTime> groups;
  std::optional<double> mfu;
  double tokens_per_s = 0.0;
};

StepFigures figures_of(const JobSummary& s) {
  return {s.step_time_s, s.compute_s, s.exposed_comm_s, s.bubble_s, s.groups, s.mfu, s.tokens_per_s};
}

StepFigures figures_of(const predict::PlanEstimate& e) {
  return {e.step_time.value(), e.compute.value(), e.exposed_comm.value(), e.bubble.value(), e.groups, e.mfu,
          e.tokens_per_s};
}

// The breakdown of one step: compute, exposed communication by group (when the groups' exposed
// times add up to the total; otherwise the total alone, since groups can overlap one another), bubble.
std::vector<BarSegment> step_segments(const StepFigures& f) {
  std::vector<BarSegment> segments{{"compute", f.compute_s}};
  std::vector<BarSegment> groups;
  double sum = 0.0;
  for (const auto& [name, t] : f.groups) {
    groups.push_back({"exposed " + name, t.exposed.value()});
    sum += t.exposed.value();
  }
  if (!groups.empty() && std::fabs(sum - f.exposed_s) <= 0.01 * std::max(f.exposed_s, 1e-12)) {
    segments.insert(segments.end(), groups.begin(), groups.end());
  } else {
    segments.push_back({"exposed communication", f.exposed_s});
  }
  segments.push_back({"bubble", f.bubble_s});
  return segments;
}

std::string step_percent(const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", 100 * *v) : "n/a"; }

struct StepEntry {
  std::string key;    // model and plan: measured and predicted runs of the same plan sort together
  std::string label;  // bar label
  std::string source;
  std::string plan;
  StepFigures figures;
};

std::vector<std::string> step_row(const StepEntry& e, const std::vector<BarSegment>& segments) {
  std::string groups;
  for (const BarSegment& s : segments) {
    if (s.name != "compute" && s.name != "bubble")
      groups += fmt::format("{}{} {:.4f}", groups.empty() ? "" : ", ", s.name.substr(s.name.find(' ') + 1), s.value);
  }
  const StepFigures& f = e.figures;
  return {e.label,
          e.source,
          e.plan,
          fmt::format("{:.4f}", f.step_s),
          fmt::format("{:.4f}", f.compute_s),
          fmt::format("{:.4f}", f.exposed_s),
          groups,
          fmt::format("{:.4f}", f.bubble_s),
          step_percent(f.mfu),
          fmt::format("{:.0f}", f.tokens_per_s)};
}

HtmlSection breakdown_section(std::string id, std::string title, std::string intro, std::vector<StepEntry> entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const StepEntry& a, const StepEntry& b) { return a.key < b.key; });
  StackedBars bars;
  bars.title = title;
  bars.value_label = "seconds per step";
  HtmlTable t{"figures per step (medians)",
              {"run", "source", "plan", "step s", "compute s", "exposed comm s", "exposed by group, s", "bubble s",
               "MFU", "tokens/s"},
              {}};
  for (const StepEntry& e : entries) {
    const std::vector<BarSegment> segments = step_segments(e.figures);
    bars.bars.push_back({e.label, segments});
    t.rows.push_back(step_row(e, segments));
  }
  HtmlSection s;
  s.id = std::move(id);
  s.title = std::move(title);
  s.paragraphs.push_back(std::move(intro));
  s.charts.push_back(stacked_bars_svg(bars));
  s.tables.push_back(std::move(t));
  return s;
}

}  // namespace

// Every field in which two plans can differ, in plan_to_json's names; defaults are left out.
std::string plan_label(const ParallelPlan& p) {
  std::string out = fmt::format("dp {} × tp {} × pp {}", p.dp, p.tp, p.pp);
  if (p.pp > 1) out += fmt::format(", {}", name(p.schedule));
  if (p.chunks > 1) out += fmt::format(" × {} chunks", p.chunks);
  out += fmt::format(", micro-batch {}, global {}", p.micro_batch, p.global_batch);
  if (p.zero_stage > 0) out += fmt::format(", ZeRO {}", p.zero_stage);
  if (p.recompute != Recompute::kNone) out += fmt::format(", recompute {}", name(p.recompute));
  if (p.sequence_parallel) out += ", sequence parallel";
  if (p.flash_attention) out += ", flash attention";
  if (p.kernels != KernelSet::kFused) out += fmt::format(", {} kernels", name(p.kernels));
  if (p.order != "tp-dp-pp") out += fmt::format(", order {}", p.order);
  const double bucket = static_cast<double>(p.bucket_bytes.count());
  if (bucket != 25.0 * 1024 * 1024) out += fmt::format(", bucket {:g} MiB", bucket / (1024.0 * 1024.0));
  return out;
}

// Measured and predicted steps are drawn side by side only when model and plan are the same (every
// field equal); the others are drawn apart, each bar naming its own model and plan.
std::vector<HtmlSection> step_sections(const ResultRefs& train, const ResultRefs& predicted) {
  if (train.empty() && predicted.empty()) return {};
  std::vector<StepEntry> entries;
  std::map<std::string, std::set<std::string>> sources;  // key -> measured, predicted
  for (const auto& [files, source] : {std::pair{&train, "measured"}, std::pair{&predicted, "predicted"}}) {
    for (const ResultFile* f : *files) {
      const JsonAt root = root_of(*f);
      const JsonAt plan_at = root.at("plan");
      const std::optional<ParallelPlan> plan =
          plan_at.value().is_object() ? std::optional(plan_from_json(plan_at)) : std::nullopt;
      const std::string label = plan ? plan_label(*plan) : std::string();
      std::string where = f->label;
      if (root.has("cluster") && root.at("cluster").has("name")) where = root.at("cluster").string("name");
      // The model is told apart by all its fields (the report draws only its name).
      const TransformerConfig model = model_from_json(root.at("model"));
      const std::string key = model_to_json(model).dump() + " | " + (plan ? plan_to_json(*plan).dump() : std::string());
      JobSummary summary;
      from_json(root.at("summary"), summary);
      sources[key].insert(source);
      entries.push_back({key, fmt::format("{} on {}: {}, {}", source, where, model.name, label), source, label,
                         figures_of(summary)});
    }
  }
  std::vector<StepEntry> paired;
  std::vector<StepEntry> apart;
  for (const StepEntry& e : entries) (sources[e.key].size() == 2 ? paired : apart).push_back(e);
  std::vector<HtmlSection> out;
  const bool have_pairs = !paired.empty();
  if (have_pairs) {
    out.push_back(breakdown_section("steps", "training step: measured against predicted",
                                    "Per plan, the step's median time split into compute, communication not hidden "
                                    "behind compute (by group where the groups add up) and pipeline bubble; measured "
                                    "runs (train) beside predicted ones (predict) of the same model and plan.",
                                    std::move(paired)));
  }
  if (!apart.empty()) {
    out.push_back(breakdown_section(
        have_pairs ? "steps-apart" : "steps", "training steps: no measured and predicted pair",
        "Steps with no counterpart of the same model and plan (a measured run without a prediction of it, or "
        "the other way round): drawn apart, not compared; each bar names its model and plan. The step's median "
        "time is split into compute, exposed communication (by group where the groups add up) and bubble.",
        std::move(apart)));
  }
  return out;
}

std::vector<HtmlSection> search_sections(const ResultRefs& search) {
  std::vector<HtmlSection> out;
  for (const ResultFile* f : search) {
    predict::SearchResult result;
    predict::SearchOptions options;
    predict::search_from_json(root_of(*f), result, options);
    std::vector<StepEntry> entries;
    for (std::size_t i = 0; i < result.ranked.size() && i < 10; ++i) {
      const predict::PlanEstimate& e = result.ranked[i].estimate;
      if (!e.estimated) continue;
      const std::string plan = plan_label(e.plan);
      const std::size_t n = entries.size();
      entries.push_back({fmt::format("{:03}", n), fmt::format("#{} {}", n + 1, plan), "predicted", plan, figures_of(e)});
    }
    if (entries.empty()) continue;
    out.push_back(breakdown_section(
        "search-" + std::to_string(out.size()),
        fmt::format("search: best plans on {}", root_of(*f).has("cluster") ? result.cluster : f->label),
        fmt::format("The best plans of {} ({} candidates, {} fit), ranked by {}.", f->label, result.candidates,
                    result.fitting, options.rank_by == predict::RankBy::kCost ? "cost" : "throughput"),
        std::move(entries)));
  }
  return out;
}

std::vector<HtmlSection> plan_sections(const ResultRefs& plans) {
  if (plans.empty()) return {};
  HtmlSection s;
  s.id = "plans";
  s.title = "plans: memory per rank";
  HtmlTable t{"plans", {"file", "model", "plan", "ranks", "largest rank GiB", "fits", "deadlock-free"}, {}};
  for (const ResultFile* f : plans) {
    const PlanSummary plan = summary_from_json(root_of(*f));
    const auto largest = static_cast<double>(largest_total(plan.memory).count());
    const std::string fits = !plan.fit ? "no GPU memory given" : plan.fit->fits ? "yes" : "no";
    t.rows.push_back({f->label, plan.model.name, plan_label(plan.plan), fmt::format("{}", world_size(plan.plan)),
                      fmt::format("{:.2f}", largest / (1024.0 * 1024.0 * 1024.0)), fits,
                      plan.program_problems.empty() ? "yes" : "no"});
  }
  s.tables.push_back(std::move(t));
  return {s};
}

}  // namespace commscale

// Report sections for training steps: measured (`train`), predicted (`predict`, `search`), planned
// (`plan`) and the Chrome trace of a measured step.

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/charts.hpp"
#include "report/html_report.hpp"

namespace commscale {
namespace {

// The breakdown of one step: compute, exposed communication by group (when the groups' exposed
// times add up to the total; otherwise the total alone, since groups can overlap one another), bubble.
std::vector<BarSegment> step_segments(const JsonAt& figures) {
  std::vector<BarSegment> segments{{"compute", figures.number("compute_s")}};
  const double exposed = figures.number("exposed_comm_s");
  std::vector<BarSegment> groups;
  double sum = 0.0;
  if (figures.has("groups") && figures.at("groups").value().is_object()) {
    const JsonAt g = figures.at("groups");
    for (const auto& [name, value] : g.value().items()) {
      const double e = g.at(name).number("exposed_s");
      groups.push_back({"exposed " + name, e});
      sum += e;
    }
  }
  if (!groups.empty() && std::fabs(sum - exposed) <= 0.01 * std::max(exposed, 1e-12)) {
    segments.insert(segments.end(), groups.begin(), groups.end());
  } else {
    segments.push_back({"exposed communication", exposed});
  }
  segments.push_back({"bubble", figures.number("bubble_s")});
  return segments;
}

std::string percent(const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", 100 * *v) : "n/a"; }

struct StepEntry {
  std::string key;    // model and plan: measured and predicted runs of the same plan sort together
  std::string label;  // bar label
  std::string source;
  std::string plan;
  const JsonAt* figures;
};

std::vector<std::string> step_row(const StepEntry& e, const std::vector<BarSegment>& segments) {
  std::string groups;
  for (const BarSegment& s : segments) {
    if (s.name != "compute" && s.name != "bubble")
      groups += fmt::format("{}{} {:.4f}", groups.empty() ? "" : ", ", s.name.substr(s.name.find(' ') + 1), s.value);
  }
  const JsonAt& f = *e.figures;
  return {e.label,
          e.source,
          e.plan,
          fmt::format("{:.4f}", f.number("step_time_s")),
          fmt::format("{:.4f}", f.number("compute_s")),
          fmt::format("{:.4f}", f.number("exposed_comm_s")),
          groups,
          fmt::format("{:.4f}", f.number("bubble_s")),
          percent(f.optional_number("mfu")),
          fmt::format("{:.0f}", f.optional_number("tokens_per_s").value_or(0.0))};
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
    const std::vector<BarSegment> segments = step_segments(*e.figures);
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

std::string model_name(const JsonAt& root) {
  return root.has("model") && root.at("model").has("name") ? root.at("model").string("name") : std::string("model");
}

}  // namespace

// Every field in which two plans can differ, in plan_to_json's names; defaults are left out.
std::string describe_plan_json(const JsonAt& plan) {
  if (!plan.value().is_object()) return "";
  const nlohmann::json& p = plan.value();
  std::string out = fmt::format("dp {} × tp {} × pp {}", plan.number("dp"), plan.number("tp"), plan.number("pp"));
  if (plan.has("schedule") && plan.number("pp") > 1) out += ", " + plan.string("schedule");
  if (plan.optional_number("chunks").value_or(1) > 1) out += fmt::format(" × {} chunks", plan.number("chunks"));
  if (plan.has("micro_batch")) out += fmt::format(", micro-batch {}", plan.number("micro_batch"));
  if (plan.has("global_batch")) out += fmt::format(", global {}", plan.number("global_batch"));
  if (plan.optional_number("zero_stage").value_or(0) > 0) out += fmt::format(", ZeRO {}", plan.number("zero_stage"));
  const std::string recompute = plan.string_or("recompute", "none");
  if (recompute != "none") out += fmt::format(", recompute {}", recompute);
  if (p.value("sequence_parallel", false)) out += ", sequence parallel";
  if (p.value("flash_attention", false)) out += ", flash attention";
  const std::string kernels = plan.string_or("kernels", "fused");
  if (kernels != "fused") out += fmt::format(", {} kernels", kernels);
  const std::string order = plan.string_or("order", "tp-dp-pp");
  if (order != "tp-dp-pp") out += fmt::format(", order {}", order);
  const double bucket = plan.optional_number("bucket_bytes").value_or(25.0 * 1024 * 1024);
  if (bucket != 25.0 * 1024 * 1024) out += fmt::format(", bucket {:g} MiB", bucket / (1024.0 * 1024.0));
  return out;
}

// Measured and predicted steps are drawn side by side only when model and plan are the same (their
// JSON equal); the others are drawn apart, each bar naming its own model and plan.
std::vector<HtmlSection> step_sections(const ResultRefs& train, const ResultRefs& predicted) {
  if (train.empty() && predicted.empty()) return {};
  std::vector<JsonAt> roots;  // kept alive for the entries' pointers
  roots.reserve(2 * (train.size() + predicted.size()));
  std::vector<StepEntry> entries;
  std::map<std::string, std::set<std::string>> sources;  // key -> measured, predicted
  for (const auto& [files, source] : {std::pair{&train, "measured"}, std::pair{&predicted, "predicted"}}) {
    for (const ResultFile* f : *files) {
      const JsonAt root = root_of(*f);
      const std::string plan = describe_plan_json(root.at("plan"));
      std::string where = f->label;
      if (root.has("cluster") && root.at("cluster").has("name")) where = root.at("cluster").string("name");
      const std::string model_key = root.has("model") ? root.at("model").value().dump() : std::string();
      const std::string key = model_key + " | " + (root.has("plan") ? root.at("plan").value().dump() : std::string());
      roots.push_back(root.at("summary"));
      sources[key].insert(source);
      entries.push_back(
          {key, fmt::format("{} on {}: {}, {}", source, where, model_name(root), plan), source, plan, nullptr});
    }
  }
  for (std::size_t i = 0; i < entries.size(); ++i) entries[i].figures = &roots[i];
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
    const JsonAt root = root_of(*f);
    std::vector<JsonAt> figures;
    const std::vector<JsonAt> top = root.array("top");
    std::vector<StepEntry> entries;
    for (std::size_t i = 0; i < top.size() && i < 10; ++i) {
      if (!top[i].has("step_time_s")) continue;
      figures.push_back(top[i]);
    }
    for (std::size_t i = 0; i < figures.size(); ++i) {
      const std::string plan = describe_plan_json(figures[i].at("plan"));
      entries.push_back({fmt::format("{:03}", i), fmt::format("#{} {}", i + 1, plan), "predicted", plan, &figures[i]});
    }
    if (entries.empty()) continue;
    out.push_back(breakdown_section(
        "search-" + std::to_string(out.size()),
        fmt::format("search: best plans on {}", root.string_or("cluster", f->label)),
        fmt::format("The best plans of {} ({} candidates, {} fit), ranked by {}.", f->label, root.number("candidates"),
                    root.number("fitting"), root.string_or("rank_by", "throughput")),
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
    const JsonAt root = root_of(*f);
    std::string fits = "no GPU memory given";
    if (root.has("fit")) fits = root.at("fit").value().value("fits", false) ? "yes" : "no";
    t.rows.push_back({f->label, model_name(root), describe_plan_json(root.at("plan")),
                      fmt::format("{}", root.number("world_size")),
                      fmt::format("{:.2f}", root.number("max_memory_per_rank_bytes") / (1024.0 * 1024.0 * 1024.0)),
                      fits, root.value().value("program_deadlock_free", false) ? "yes" : "no"});
  }
  s.tables.push_back(std::move(t));
  return {s};
}

}  // namespace commscale

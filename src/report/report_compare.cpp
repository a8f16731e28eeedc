// Report sections for `commscale compare` files (throughput per cluster, scaling curves), and the
// page that puts every section together.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/charts.hpp"
#include "report/compare_report.hpp"
#include "report/html_report.hpp"

namespace commscale {
namespace {

std::string optional_text(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("n/a");
}

std::string percent(const std::optional<double>& fraction) {
  return fraction ? fmt::format("{:.1f}%", 100 * *fraction) : std::string("n/a");
}

// Throughput on log-log axes (linear scaling is a straight line of slope 1); efficiency against the
// baseline each series names: tokens/s per GPU over the same at the smallest size where a plan fits.
HtmlSection scaling_section(const std::vector<ChartSeries>& tokens, const std::vector<ChartSeries>& efficiency,
                            const std::string& baselines, HtmlTable table) {
  HtmlSection s;
  s.id = "scaling";
  s.title = "compare: scaling";
  s.paragraphs.push_back(fmt::format(
      "Predicted throughput and scaling efficiency as the cluster grows, at a fixed global batch, with the best "
      "plan at each size. Throughput is drawn on log-log axes (base 2), where linear scaling is a straight line "
      "of slope 1. Efficiency is tokens/s per GPU divided by the same at the baseline, the smallest size where "
      "a plan fits ({}); above 1 where a larger cluster allows a better plan than the baseline's.",
      baselines));
  LineChart t{"throughput against cluster size (log-log)",
              "GPUs",
              "tokens/s (log scale)",
              AxisScale::kLog2,
              false,
              tokens,
              {},
              AxisScale::kLog2};
  LineChart e{fmt::format("scaling efficiency against cluster size (baseline: {})", baselines),
              "GPUs",
              "efficiency (1 = linear from the baseline)",
              AxisScale::kLog2,
              false,
              efficiency,
              {},
              AxisScale::kLinear};
  s.charts.push_back(line_chart_svg(t));
  s.charts.push_back(line_chart_svg(e));
  s.tables.push_back(std::move(table));
  return s;
}

// The size efficiency is measured against: the smallest size with a plan (compare's `baseline_gpus`).
int baseline_gpus(const std::vector<predict::ScalingPoint>& points) {
  int lo = 0;
  for (const predict::ScalingPoint& p : points) {
    if (p.best && (lo == 0 || p.gpus < lo)) lo = p.gpus;
  }
  return lo;
}

}  // namespace

std::vector<HtmlSection> compare_sections(const ResultRefs& compare) {
  std::vector<HtmlSection> out;
  std::vector<ChartSeries> tokens;
  std::vector<ChartSeries> efficiency;
  HtmlTable scaling{"scaling points",
                    {"file", "cluster", "GPUs", "tokens/s", "MFU", "efficiency vs baseline", "baseline GPUs", "plan"},
                    {}};
  std::string baselines;
  for (const ResultFile* f : compare) {
    const JsonAt root = root_of(*f);
    predict::CompareResult result;
    predict::CompareInputs inputs;
    predict::compare_from_json(root, result, inputs);
    const std::string model = root.has("model") ? result.model : f->label;
    StackedBars bars{fmt::format("{}: predicted throughput per cluster", model), "tokens/s", {}};
    // The basis is shown only when the file states it (older files do not).
    const std::string basis = root.has("assumptions") ? root.at("assumptions").string_or("cost_basis", "") : "";
    ScatterChart cost{
        fmt::format("{}: cost against throughput{}", model, basis.empty() ? "" : fmt::format(" (cost basis: {})", basis)),
        "tokens/s",
        "USD per million tokens",
        {}};
    HtmlTable t{
        "clusters", {"cluster", "GPUs", "tokens/s", "MFU", "step s", "USD per Mtoken", "J per token", "best plan"}, {}};
    std::vector<std::string> left_out;  // clusters not on the cost chart, and why
    for (const predict::CompareEntry& c : result.entries) {
      const std::string label = !c.label.empty() ? c.label : !c.cluster.empty() ? c.cluster : "?";
      if (!c.prediction) {
        t.rows.push_back({label, fmt::format("{}", c.gpus), "no plan fits", "", "", "", "", c.closest});
        left_out.push_back(fmt::format("{} (no plan fits)", label));
        continue;
      }
      if (!c.usd_per_million_tokens) left_out.push_back(fmt::format("{} (no price on this basis)", label));
      const JobSummary& s = c.prediction->summary;
      bars.bars.push_back({label, {{"tokens/s", s.tokens_per_s}}});
      if (c.usd_per_million_tokens) cost.points.push_back({label, s.tokens_per_s, *c.usd_per_million_tokens});
      t.rows.push_back({label, fmt::format("{}", c.gpus), fmt::format("{:.0f}", s.tokens_per_s), percent(s.mfu),
                        fmt::format("{:.4f}", s.step_time_s), optional_text(c.usd_per_million_tokens, "{:.3f}"),
                        optional_text(c.joules_per_token, "{:.3f}"), plan_label(c.prediction->plan)});
    }
    HtmlSection s;
    s.id = "compare-" + std::to_string(out.size());
    s.title = "compare: " + f->label;
    s.paragraphs.push_back(fmt::format("{} on each cluster with its best plan that fits (predicted), global batch {}.",
                                       root.has("model") ? result.model : "the model", inputs.search.global_batch));
    if (!bars.bars.empty()) s.charts.push_back(stacked_bars_svg(bars));
    // Clusters without a price on the file's basis are left out of the cost chart, not priced otherwise, and
    // named; a front of one point is no comparison, so the chart needs two.
    if (cost.points.size() >= 2) s.charts.push_back(scatter_chart_svg(cost));
    if (cost.points.size() == 1) {
      s.paragraphs.push_back(fmt::format("No cost chart: only {} has a price and a plan.", cost.points[0].label));
    }
    if (!left_out.empty()) {
      s.paragraphs.push_back(fmt::format("Not on the cost chart: {}.", fmt::join(left_out, ", ")));
    }
    s.tables.push_back(std::move(t));
    out.push_back(std::move(s));
    if (!root.has("scaling")) continue;
    ChartSeries tk{root.at("scaling").has("cluster") ? result.scaling_cluster : f->label, {}};
    const auto baseline = static_cast<double>(baseline_gpus(result.scaling));
    ChartSeries ef{fmt::format("{} (against {:g} GPUs)", tk.name, baseline), {}};
    baselines +=
        fmt::format("{}{:g} GPU{} of {}", baselines.empty() ? "" : "; ", baseline, baseline == 1 ? "" : "s", tk.name);
    for (const predict::ScalingPoint& p : result.scaling) {
      if (!p.best) continue;
      const auto gpus = static_cast<double>(p.gpus);
      tk.points.emplace_back(gpus, p.best->tokens_per_s);
      ef.points.emplace_back(gpus, p.efficiency);
      scaling.rows.push_back({f->label, tk.name, fmt::format("{}", p.gpus), fmt::format("{:.0f}", p.best->tokens_per_s),
                              percent(p.best->mfu), fmt::format("{:.1f}%", 100 * p.efficiency),
                              fmt::format("{:g}", baseline), plan_label(p.best->plan)});
    }
    tokens.push_back(std::move(tk));
    efficiency.push_back(std::move(ef));
  }
  if (!tokens.empty()) out.push_back(scaling_section(tokens, efficiency, baselines, std::move(scaling)));
  return out;
}

HtmlPage build_report(const LoadedResults& results, const ReportOptions& options) {
  std::map<ResultKind, ResultRefs> by_kind;
  HtmlPage page;
  page.title = options.title;
  for (const ResultFile& f : results.files) {
    by_kind[f.kind].push_back(&f);
    page.inputs.push_back(fmt::format("{} ({})", f.path.generic_string(), kind_name(f.kind)));
  }
  for (const std::string& s : results.skipped) page.notes.push_back("not rendered: " + s);
  const auto add = [&page](std::vector<HtmlSection> sections) {
    for (HtmlSection& s : sections) page.sections.push_back(std::move(s));
  };
  ResultRefs predicted = by_kind[ResultKind::kPrediction];
  add(bench_sections(by_kind[ResultKind::kBench], by_kind[ResultKind::kP2p], options));
  add(p2p_sections(by_kind[ResultKind::kP2p]));
  add(topo_sections(by_kind[ResultKind::kTopo]));
  add(step_sections(by_kind[ResultKind::kTrain], predicted));
  add(trace_sections(by_kind[ResultKind::kChromeTrace], options));
  add(compare_sections(by_kind[ResultKind::kCompare]));
  add(search_sections(by_kind[ResultKind::kSearch]));
  add(plan_sections(by_kind[ResultKind::kPlan]));
  add(doctor_sections(by_kind[ResultKind::kDoctor]));
  return page;
}

}  // namespace commscale

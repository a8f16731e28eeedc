// The step timeline: the first step of a Chrome trace (as `train --trace` writes it) drawn as one
// lane per rank and stream, with a link to the trace file for Perfetto.

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/charts.hpp"
#include "report/html_report.hpp"

namespace commscale {
namespace {

constexpr std::size_t kMaxSpans = 20000;
constexpr std::size_t kMaxLanes = 64;

struct TraceNames {
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
};

TraceNames trace_names(const std::vector<JsonAt>& events) {
  TraceNames n;
  for (const JsonAt& e : events) {
    if (e.string_or("ph", "") != "M" || !e.has("args") || !e.at("args").has("name")) continue;
    const int pid = static_cast<int>(e.optional_number("pid").value_or(0));
    if (e.string("name") == "process_name") n.processes[pid] = e.at("args").string("name");
    if (e.string("name") == "thread_name") {
      n.threads[{pid, static_cast<int>(e.optional_number("tid").value_or(0))}] = e.at("args").string("name");
    }
  }
  return n;
}

int step_of(const JsonAt& e) {
  return e.has("args") && e.at("args").has("step") ? static_cast<int>(e.at("args").number("step")) : 0;
}

}  // namespace

std::vector<HtmlSection> trace_sections(const ResultRefs& traces, const ReportOptions& options) {
  std::vector<HtmlSection> out;
  for (const ResultFile* f : traces) {
    const std::vector<JsonAt> events = root_of(*f).array("traceEvents");
    const TraceNames names = trace_names(events);
    int first_step = -1;
    for (const JsonAt& e : events) {
      if (e.string_or("ph", "") == "X") first_step = first_step < 0 ? step_of(e) : std::min(first_step, step_of(e));
    }
    std::map<std::pair<int, int>, std::size_t> lane_of;
    std::vector<const JsonAt*> shown;
    for (const JsonAt& e : events) {
      if (e.string_or("ph", "") != "X" || step_of(e) != first_step) continue;
      lane_of.emplace(std::pair{static_cast<int>(e.number("pid")), static_cast<int>(e.number("tid"))}, 0);
      shown.push_back(&e);
    }
    TimelineChart chart;
    chart.title = fmt::format("{}: step {} on every rank and stream", f->label, first_step);
    chart.time_label = "ms from the step's first op";
    std::size_t lane = 0;
    for (auto& [key, index] : lane_of) {
      index = lane++;
      const auto p = names.processes.find(key.first);
      const auto t = names.threads.find(key);
      chart.lanes.push_back(fmt::format("{} {}",
                                        p != names.processes.end() ? p->second : fmt::format("pid {}", key.first),
                                        t != names.threads.end() ? t->second : fmt::format("tid {}", key.second)));
    }
    std::size_t dropped = 0;
    for (const JsonAt* e : shown) {
      const std::size_t l = lane_of.at({static_cast<int>(e->number("pid")), static_cast<int>(e->number("tid"))});
      if (l >= kMaxLanes || chart.spans.size() >= kMaxSpans) {
        ++dropped;
        continue;
      }
      const double start_ms = e->number("ts") / 1e3;
      chart.spans.push_back({l, start_ms, start_ms + e->optional_number("dur").value_or(0.0) / 1e3,
                             e->string_or("name", "op"), e->string_or("cat", "op")});
    }
    if (chart.lanes.size() > kMaxLanes) chart.lanes.resize(kMaxLanes);
    HtmlSection s;
    s.id = "timeline-" + std::to_string(out.size());
    s.title = "step timeline: " + f->label;
    const JsonAt root = root_of(*f);
    if (root.has("otherData") && root.at("otherData").has("engine")) {
      // "executor" (train, measured) or the predictor's engine.
      s.paragraphs.push_back("Timeline engine: " + root.at("otherData").string("engine") + ".");
    }
    s.paragraphs.push_back(
        "Every op of the first timed step, one lane per rank and stream (hover for the op). The "
        "whole trace opens in Perfetto (ui.perfetto.dev → Open trace file) or chrome://tracing.");
    if (dropped > 0)
      s.paragraphs.push_back(
          fmt::format("{} ops beyond {} lanes or {} ops are not drawn.", dropped, kMaxLanes, kMaxSpans));
    std::error_code ec;
    std::filesystem::path link =
        std::filesystem::relative(std::filesystem::absolute(f->path, ec), options.output_dir, ec);
    if (ec || link.empty()) link = std::filesystem::absolute(f->path, ec);
    s.links.emplace_back(fmt::format("the Chrome trace: {}", link.generic_string()), link.generic_string());
    s.links.emplace_back("Perfetto UI (opens the trace file you choose; needs the network)",
                         "https://ui.perfetto.dev/");
    s.charts.push_back(timeline_svg(chart));
    // The table behind the chart: time per stream category per rank.
    std::map<std::string, double> busy;
    for (const Span& sp : chart.spans) busy[chart.lanes[sp.lane]] += sp.end - sp.start;
    HtmlTable t{"busy time per lane in the step", {"lane", "ops", "busy ms"}, {}};
    std::map<std::string, int> count;
    for (const Span& sp : chart.spans) ++count[chart.lanes[sp.lane]];
    for (const std::string& l : chart.lanes)
      t.rows.push_back({l, std::to_string(count[l]), fmt::format("{:.3f}", busy[l])});
    s.tables.push_back(std::move(t));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace commscale

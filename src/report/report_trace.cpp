// The step timeline: the first step of a Chrome trace (as `train --trace` writes it) drawn as one
// lane per rank and stream, with a link to the trace file for Perfetto.

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/charts.hpp"
#include "report/chrome_trace.hpp"
#include "report/html_report.hpp"

namespace commscale {
namespace {

constexpr std::size_t kMaxSpans = 20000;
constexpr std::size_t kMaxLanes = 64;

struct TraceNames {
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
};

TraceNames trace_names(const ChromeTrace& trace) {
  TraceNames n;
  for (const TraceName& name : trace.names) {
    if (name.tid) {
      n.threads[{name.pid, *name.tid}] = name.name;
    } else {
      n.processes[name.pid] = name.name;
    }
  }
  return n;
}

}  // namespace

std::vector<HtmlSection> trace_sections(const ResultRefs& traces, const ReportOptions& options) {
  std::vector<HtmlSection> out;
  for (const ResultFile* f : traces) {
    const ChromeTrace trace = chrome_trace_from_json(root_of(*f));
    const TraceNames names = trace_names(trace);
    int first_step = -1;
    for (const TraceOp& op : trace.ops) first_step = first_step < 0 ? op.step : std::min(first_step, op.step);
    std::map<std::pair<int, int>, std::size_t> lane_of;
    std::vector<const TraceOp*> shown;
    for (const TraceOp& op : trace.ops) {
      if (op.step != first_step) continue;
      lane_of.emplace(std::pair{op.pid, op.tid}, 0);
      shown.push_back(&op);
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
    for (const TraceOp* op : shown) {
      const std::size_t l = lane_of.at({op->pid, op->tid});
      if (l >= kMaxLanes || chart.spans.size() >= kMaxSpans) {
        ++dropped;
        continue;
      }
      const double start_ms = op->start_us / 1e3;
      chart.spans.push_back({l, start_ms, start_ms + op->duration_us / 1e3, op->name, op->category});
    }
    if (chart.lanes.size() > kMaxLanes) chart.lanes.resize(kMaxLanes);
    HtmlSection s;
    s.id = "timeline-" + std::to_string(out.size());
    s.title = "step timeline: " + f->label;
    if (trace.engine) s.paragraphs.push_back("Timeline engine: " + *trace.engine + ".");
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

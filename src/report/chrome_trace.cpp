#include "report/chrome_trace.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <variant>

namespace commscale {
namespace {

nlohmann::json op_annotations(const Op& op) {
  nlohmann::json args = {{"phase", name(op.phase)}};
  if (op.microbatch >= 0) args["microbatch"] = op.microbatch;
  if (op.layer >= 0) args["layer"] = op.layer;
  if (const auto* g = std::get_if<Gemm>(&op.payload)) {
    args["gemm"] = {{"m", g->m}, {"n", g->n}, {"k", g->k}, {"batch", g->batch}, {"dtype", name(g->dtype)}};
    args["flops"] = g->flops.value();
  } else if (const auto* k = std::get_if<MemoryKernel>(&op.payload)) {
    args["kernel"] = name(k->kind);
    if (k->kernels != KernelSet::kFused) args["kernels"] = name(k->kernels);
    args["bytes_read"] = k->bytes_read.count();
    args["bytes_written"] = k->bytes_written.count();
  } else if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
    args["collective"] = name(c->kind);
    args["bytes"] = c->bytes.count();
  } else if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
    args[std::string(name(p->direction))] = p->peer;
    args["bytes"] = p->bytes.count();
  } else if (const auto* h = std::get_if<HostCopy>(&op.payload)) {
    args["copy"] = name(h->direction);
    args["bytes"] = h->bytes.count();
  }
  return args;
}

// A predicted op's attribution (program/timeline.hpp), in microseconds as the trace's times: the parts
// it has, so that an op shows in Perfetto what held it back and what its duration holds.
void add_attribution(const EventAttribution& a, nlohmann::json& args) {
  const std::array<std::pair<const char*, Seconds>, 4> parts = {
      {{"host_us", a.host}, {"peers_us", a.peers}, {"latency_us", a.latency}, {"interference_us", a.interference}}};
  for (const auto& [key, seconds] : parts) {
    if (seconds.value() > 0) args[key] = seconds.value() * 1e6;
  }
}

}  // namespace

ChromeTrace chrome_trace(const ProgramSet& set, const Timeline& timeline) {
  ChromeTrace trace;
  trace.engine = timeline.engine;
  for (int r = 0; r < set.world_size; ++r) {
    trace.names.push_back({r, std::nullopt, "rank " + std::to_string(r)});
    for (int s = 0; s < kStreamCount; ++s) {
      const auto stream = static_cast<Stream>(s);
      if (listed_stream(ops_of(set, r), stream)) trace.names.push_back({r, s, std::string(name(stream))});
    }
  }
  // Where each step starts on the common time axis: after the latest end of the steps before it.
  std::vector<double> step_end(static_cast<std::size_t>(std::max(timeline.steps, 0)), 0.0);
  for (const TimelineEvent& e : timeline.events) {
    double& end = step_end.at(static_cast<std::size_t>(e.step));
    end = std::max(end, e.end.value());
  }
  std::vector<double> offset(step_end.size(), 0.0);
  for (std::size_t s = 1; s < offset.size(); ++s) offset[s] = offset[s - 1] + step_end[s - 1];
  for (std::size_t i = 0; i < timeline.events.size(); ++i) {
    const TimelineEvent& e = timeline.events[i];
    const Op& op = ops_of(set, e.rank).at(e.op);
    nlohmann::json args = op_annotations(op);
    if (!timeline.attribution.empty()) add_attribution(timeline.attribution.at(i), args);
    trace.ops.push_back({op.name, std::string(name(op.stream)), e.rank, static_cast<int>(op.stream),
                         (offset[static_cast<std::size_t>(e.step)] + e.start.value()) * 1e6,
                         (e.end - e.start).value() * 1e6, e.step, std::move(args)});
  }
  return trace;
}

void to_json(nlohmann::json& out, const ChromeTrace& trace) {
  nlohmann::json events = nlohmann::json::array();
  for (const TraceName& n : trace.names) {
    nlohmann::json e = {{"name", n.tid ? "thread_name" : "process_name"}, {"ph", "M"}, {"pid", n.pid}};
    if (n.tid) e["tid"] = *n.tid;
    e["args"] = {{"name", n.name}};
    events.push_back(std::move(e));
  }
  for (const TraceOp& op : trace.ops) {
    nlohmann::json args = op.annotations;
    args["step"] = op.step;
    events.push_back({{"name", op.name},
                      {"cat", op.category},
                      {"ph", "X"},
                      {"pid", op.pid},
                      {"tid", op.tid},
                      {"ts", op.start_us},
                      {"dur", op.duration_us},
                      {"args", std::move(args)}});
  }
  out = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  if (trace.engine) out["otherData"] = {{"engine", *trace.engine}};
}

ChromeTrace chrome_trace_from_json(const JsonAt& in) {
  ChromeTrace trace;
  for (const JsonAt& e : in.array("traceEvents")) {
    const std::string phase = e.string_or("ph", "");
    if (phase == "M") {
      if (!e.has("args") || !e.at("args").has("name")) continue;
      const std::string what = e.string("name");
      const int pid = static_cast<int>(e.number_or("pid", 0));
      if (what == "process_name") trace.names.push_back({pid, std::nullopt, e.at("args").string("name")});
      if (what == "thread_name")
        trace.names.push_back({pid, static_cast<int>(e.number_or("tid", 0)), e.at("args").string("name")});
    } else if (phase == "X") {
      TraceOp op{e.string_or("name", "op"), e.string_or("cat", "op"), static_cast<int>(e.number("pid")),
                 static_cast<int>(e.number("tid")), e.number("ts"), e.number_or("dur", 0.0), 0,
                 nlohmann::json::object()};
      if (e.has("args") && e.at("args").value().is_object()) {
        op.step = static_cast<int>(e.at("args").number_or("step", 0));
        op.annotations = e.at("args").value();
        op.annotations.erase("step");
      }
      trace.ops.push_back(std::move(op));
    }
  }
  if (in.has("otherData") && in.at("otherData").has("engine")) trace.engine = in.at("otherData").string("engine");
  return trace;
}

}  // namespace commscale

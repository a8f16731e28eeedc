#include "report/chrome_trace.hpp"

#include <algorithm>
#include <variant>

namespace commscale {
namespace {

nlohmann::json op_args(const Op& op, int step) {
  nlohmann::json args = {{"step", step}, {"phase", name(op.phase)}};
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
  }
  return args;
}

}  // namespace

nlohmann::json chrome_trace(const ProgramSet& set, const Timeline& timeline) {
  nlohmann::json events = nlohmann::json::array();
  for (int r = 0; r < set.world_size; ++r) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", r}, {"args", {{"name", "rank " + std::to_string(r)}}}});
    for (int s = 0; s < kStreamCount; ++s) {
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", r},
                        {"tid", s},
                        {"args", {{"name", std::string(name(static_cast<Stream>(s)))}}}});
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
  for (const TimelineEvent& e : timeline.events) {
    const Op& op = ops_of(set, e.rank).at(e.op);
    const double start_us = (offset[static_cast<std::size_t>(e.step)] + e.start.value()) * 1e6;
    events.push_back({{"name", op.name},
                      {"cat", std::string(name(op.stream))},
                      {"ph", "X"},
                      {"pid", e.rank},
                      {"tid", static_cast<int>(op.stream)},
                      {"ts", start_us},
                      {"dur", (e.end - e.start).value() * 1e6},
                      {"args", op_args(op, e.step)}});
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", {{"engine", timeline.engine}}}};
}

}  // namespace commscale

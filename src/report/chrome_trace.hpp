#pragma once

// A timeline as a Chrome trace (the JSON Trace Event Format), which Perfetto (ui.perfetto.dev) and
// chrome://tracing open: one process per rank, one thread per stream, one complete event per op.
// Steps are laid end to end, each starting where the previous one ended.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_at.hpp"
#include "program/op.hpp"
#include "program/timeline.hpp"

namespace commscale {

// The name of a process (a rank; no tid) or of a thread (a stream): a metadata event, "ph": "M".
struct TraceName {
  int pid = 0;
  std::optional<int> tid;
  std::string name;
  bool operator==(const TraceName&) const = default;
};

// One op: a complete event, "ph": "X", on the lane (pid, tid).
struct TraceOp {
  std::string name;
  std::string category;  // "cat": the stream's name
  int pid = 0;           // the rank
  int tid = 0;           // the stream
  double start_us = 0.0;
  double duration_us = 0.0;
  int step = 0;  // args.step
  // The rest of args (phase, micro-batch, GEMM shape, bytes, peer): what Perfetto shows on hover.
  // Nothing in commscale reads them back, so they are kept as written.
  nlohmann::json annotations = nlohmann::json::object();
  bool operator==(const TraceOp&) const = default;
};

struct ChromeTrace {
  std::vector<TraceName> names;  // written first, in this order
  std::vector<TraceOp> ops;
  std::optional<std::string> engine;  // otherData.engine: "executor" (train, measured) or the predictor's
};

[[nodiscard]] ChromeTrace chrome_trace(const ProgramSet& set, const Timeline& timeline);

void to_json(nlohmann::json& out, const ChromeTrace& trace);
// The inverse of to_json, for `commscale report`: to_json(chrome_trace_from_json(doc)) == doc for a
// trace commscale wrote. A trace of another tool reads as the report has always drawn one: events
// of other phases, and metadata other than process and thread names, are passed over; an op without
// a name or category is "op", without a duration 0 long, without args.step in step 0. An op's pid,
// tid and ts are required: errors name the file and key (traceEvents[12].ts).
[[nodiscard]] ChromeTrace chrome_trace_from_json(const JsonAt& in);

}  // namespace commscale

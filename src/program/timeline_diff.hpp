#pragma once

// Differences between two timelines of one step program (program/timeline.hpp): a measured and a
// predicted one, two measurements, two predictions. `commscale diff-trace A B` prints this.
//
//  - per step: step time and the breakdown (break_down_step) of each timeline, step by step while
//    both have that step, and their means over all steps;
//  - per stream: the time ops occupy each stream (sum of end - start), per rank and step, mean over
//    ranks and steps;
//  - per op kind: ops grouped by stream and by name with the microbatch, chunk, layer and bucket
//    numbers taken out ("mb3.L7.fwd.qkv" -> "L*.fwd.qkv"), total duration per rank and step;
//  - per op: the ops (rank, op) whose mean duration differs most.
// A duration is end - start as recorded: for communication it includes waiting for the peers.
// Relative differences are (B - A) / A.
//
// Where a timeline has attribution (timeline.hpp: a predicted one), its parts go beside the durations
// of that side: per op kind summed per rank and step, per op as a mean over steps, and in all per rank
// and step (mean over ranks and steps).

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "program/breakdown.hpp"
#include "program/op.hpp"
#include "program/timeline.hpp"

namespace commscale {

struct StepComparison {
  int step = 0;
  StepBreakdown a;
  StepBreakdown b;
};

// Seconds of a timeline's attribution (timeline.hpp, EventAttribution), summed over some events.
struct AttributionSums {
  double host_s = 0.0;
  double peers_s = 0.0;
  double latency_s = 0.0;
  double interference_s = 0.0;
};

struct TimeComparison {
  std::string key;  // stream name, op kind, or "rank r op i name"
  std::string stream;
  double count = 0.0;  // ops per rank per step (op kinds)
  double a_s = 0.0;
  double b_s = 0.0;
  [[nodiscard]] double difference() const noexcept { return b_s - a_s; }
  [[nodiscard]] double relative() const noexcept { return a_s > 0 ? (b_s - a_s) / a_s : 0.0; }
  std::optional<AttributionSums> a_parts{};  // where timeline A has attribution (op kinds and ops)
  std::optional<AttributionSums> b_parts{};
};

struct TimelineDiff {
  std::string engine_a;
  std::string engine_b;
  int steps_a = 0;
  int steps_b = 0;
  std::vector<StepComparison> steps;                        // steps both timelines have
  TimeComparison step_time, compute, exposed_comm, bubble;  // means over each timeline's steps
  std::vector<TimeComparison> groups;                       // exposed time per group, means
  std::vector<TimeComparison> streams;
  std::vector<TimeComparison> kinds;  // largest |B - A| first
  std::vector<TimeComparison> ops;    // the `top` largest |B - A|
  std::optional<AttributionSums> a_parts;  // per rank and step, means, where timeline A has attribution
  std::optional<AttributionSums> b_parts;
};

// "mb3.c1.L7.bwd.mlp.fc1.dgrad" -> "L*.bwd.mlp.fc1.dgrad".
[[nodiscard]] std::string op_kind(std::string_view name);

// Both timelines are validated against the set first (InputError naming `name_a` or `name_b`).
[[nodiscard]] TimelineDiff diff_timelines(const ProgramSet& set, const Timeline& a, const Timeline& b,
                                          const std::string& name_a, const std::string& name_b, std::size_t top = 20);

}  // namespace commscale

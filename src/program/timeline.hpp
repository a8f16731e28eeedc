#pragma once

// A timeline: when each op of a step program ran, on every rank, for one or more steps. The executor
// (`train`) measures one; the predictor simulates one; both use this schema, so any two timelines of
// the same program compare op by op (diff_timelines) and break down the same way (breakdown.hpp).
//
// Times are seconds from the start of the step on the rank. The executor starts every step on every
// rank after a barrier, so step starts agree across ranks to within the barrier's skew (a few
// microseconds); the predictor starts all ranks at 0.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/units.hpp"
#include "program/op.hpp"

namespace commscale {

struct TimelineEvent {
  int rank = 0;
  int step = 0;  // index of the timed step, from 0
  OpId op = 0;   // into the rank's op list (ops_of(set, rank))
  Seconds start;
  Seconds end;
};

struct Timeline {
  std::string engine;  // "executor" or "predictor"
  int world_size = 0;
  int steps = 0;
  std::vector<TimelineEvent> events;  // any order
};

// JSON: {"engine", "world_size", "steps", "events": [[rank, step, op, start_s, end_s], ...]}.
void to_json(nlohmann::json& out, const Timeline& timeline);
void from_json(const nlohmann::json& in, Timeline& timeline);

// Checks that every event names a rank, step and op that exist, ends after it starts, and that every
// op of every rank appears exactly once per step. Throws InputError naming `where` (a file, say).
void validate_timeline(const ProgramSet& set, const Timeline& timeline, const std::string& where);

}  // namespace commscale

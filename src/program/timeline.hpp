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

// Where the predictor says an event's time went (the predictor's timeline only; train measures none):
//   host          how long the host held the op back: issued after its stream and deps let it start.
//                 This time lies before `start` (the op starts once issued), not within the op.
//   peers         a communication op's wait for the other participants (until the last one arrived)
//   latency       the latency term of a communication op's time under the comm model (the rest moves
//                 the bytes; 0 where a calibration curve timed the collective)
//   interference  what running beside communication (a compute op) or compute (a communication op)
//                 on the same GPU added to the op
// Peers, latency and interference lie within [start, end]; a compute op has none of peers or latency.
struct EventAttribution {
  Seconds host;
  Seconds peers;
  Seconds latency;
  Seconds interference;
};

struct Timeline {
  std::string engine;  // "executor" or "predictor"
  int world_size = 0;
  int steps = 0;
  std::vector<TimelineEvent> events;  // any order
  std::vector<EventAttribution> attribution{};  // empty, or one per event, in the order of `events`
};

inline constexpr int kAttributionVersion = 1;

// JSON: {"engine", "world_size", "steps", "events": [[rank, step, op, start_s, end_s], ...]}, and
// where the timeline has attribution, "attribution": {"version": 1, "fields": ["host_s", "peers_s",
// "latency_s", "interference_s"], "events": [[host_s, peers_s, latency_s, interference_s], ...]}, one
// entry per event in the order of "events": a reader that knows no attribution reads the rest as before.
void to_json(nlohmann::json& out, const Timeline& timeline);
void from_json(const nlohmann::json& in, Timeline& timeline);

// Checks that every event names a rank, step and op that exist, ends after it starts, that every op of
// every rank appears exactly once per step, and that attribution, if any, has one entry per event.
// Throws InputError naming `where` (a file, say).
void validate_timeline(const ProgramSet& set, const Timeline& timeline, const std::string& where);

}  // namespace commscale

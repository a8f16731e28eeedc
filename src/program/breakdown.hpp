#pragma once

// Where a step's time went, from a timeline of a step program: the same arithmetic for measured
// and predicted timelines.
//
// A communication op moves data only once every rank it involves has reached it: before that, the
// rank that arrived first waits for the others. So a collective counts from the latest start among
// its group's members (for the same call, matched in program order) to its end, and a transfer from
// the later of its send and its receive; the time before is waiting, not communicating.
//
// Per rank and step, within the step window (the earliest start to the latest end over all ranks):
//   compute       time the compute stream is busy (the union of its ops' intervals);
//   exposed comm  time some communication op is moving data and the compute stream is not;
//   bubble        the rest: the rank waits for others (pipeline fill and drain, stragglers, a peer
//                 that has not reached the collective yet);
// so compute + exposed comm + bubble = step time on every rank. Copies between the GPU and host memory
// (offload's HostCopy ops) move data over PCIe and count as communication, charged to "offload". Per
// group ("tp", "dp", "pp", "embedding", "offload"), busy is the union of that group's data-moving
// intervals and exposed the part of it the compute stream does not cover; groups running at once are
// each charged, so the exposed times of the groups can add up to more than the rank's exposed
// communication.

#include <map>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "program/op.hpp"
#include "program/timeline.hpp"

namespace commscale {

struct GroupTime {
  Seconds busy;
  Seconds exposed;
};

struct RankBreakdown {
  int rank = 0;
  Seconds compute;
  Seconds exposed_comm;
  Seconds bubble;
  std::map<std::string, GroupTime> groups;  // by group name; "pp" joins pp-fwd and pp-bwd
};

struct StepBreakdown {
  int step = 0;
  Seconds step_time;
  std::vector<RankBreakdown> ranks;  // by rank
  // Means over ranks: compute + exposed_comm + bubble = step_time.
  Seconds compute;
  Seconds exposed_comm;
  Seconds bubble;
  std::map<std::string, GroupTime> groups;
};

[[nodiscard]] StepBreakdown break_down_step(const ProgramSet& set, const Timeline& timeline, int step);

// The group an op's time is charged to: "compute" for compute ops, "offload" for host copies, else its
// group's name, with the two pipeline directions ("pp-fwd", "pp-bwd") joined as "pp".
[[nodiscard]] std::string charge_group(const ProgramSet& set, int rank, const Op& op);

// The length of the union of intervals [start, end).
struct Interval {
  double start = 0.0;
  double end = 0.0;
};
[[nodiscard]] double union_length(std::vector<Interval> intervals);
// The length of the part of the union of `a` that the union of `b` does not cover.
[[nodiscard]] double uncovered_length(std::vector<Interval> a, std::vector<Interval> b);

// The same arithmetic in linear time, for intervals already sorted by start (as one stream's ops are):
// `sorted`'s union as disjoint intervals in order, into `out` (its storage reused); the length of such
// a union; the length of union `a` not covered by union `b`.
void merge_sorted(const std::vector<Interval>& sorted, std::vector<Interval>& out);
[[nodiscard]] double merged_length(const std::vector<Interval>& merged) noexcept;
[[nodiscard]] double uncovered_merged_length(const std::vector<Interval>& a, const std::vector<Interval>& b) noexcept;

}  // namespace commscale

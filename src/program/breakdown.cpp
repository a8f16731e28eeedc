#include "program/breakdown.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "program/arrivals.hpp"

namespace commscale {
namespace {

// Sorted, merged intervals.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  merge_sorted(v, out);
  return out;
}

}  // namespace

void merge_sorted(const std::vector<Interval>& sorted, std::vector<Interval>& out) {
  out.clear();
  for (const Interval& i : sorted) {
    if (i.end <= i.start) continue;
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
}

double merged_length(const std::vector<Interval>& merged) noexcept {
  double total = 0.0;
  for (const Interval& i : merged) total += i.end - i.start;
  return total;
}

double uncovered_merged_length(const std::vector<Interval>& a, const std::vector<Interval>& b) noexcept {
  double covered = 0.0;
  std::size_t j = 0;
  for (const Interval& x : a) {
    while (j < b.size() && b[j].end <= x.start) ++j;
    for (std::size_t k = j; k < b.size() && b[k].start < x.end; ++k) {
      covered += std::min(x.end, b[k].end) - std::max(x.start, b[k].start);
    }
  }
  return merged_length(a) - covered;
}

double union_length(std::vector<Interval> intervals) { return merged_length(merged(std::move(intervals))); }

double uncovered_length(std::vector<Interval> a, std::vector<Interval> b) {
  return uncovered_merged_length(merged(std::move(a)), merged(std::move(b)));
}

std::string charge_group(const ProgramSet& set, int rank, const Op& op) {
  const RankProgram& rp = set.ranks.at(static_cast<std::size_t>(rank));
  std::uint32_t handle = 0;
  if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
    handle = c->group;
  } else if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
    handle = p->group;
  } else if (std::holds_alternative<HostCopy>(op.payload)) {
    return std::string(kOffloadGroup);
  } else {
    return "compute";
  }
  return std::string(charged_name(rp.groups.at(handle).role));
}

StepBreakdown break_down_step(const ProgramSet& set, const Timeline& timeline, int step) {
  StepBreakdown b;
  b.step = step;
  const auto n = static_cast<std::size_t>(set.world_size);
  const StepEvents step_events(set, timeline, step);
  const std::vector<const TimelineEvent*>& events = step_events.events();
  const Arrivals arrivals(set, step_events);

  std::vector<std::vector<Interval>> compute(n);
  std::vector<std::vector<Interval>> comm(n);
  std::vector<std::map<std::string, std::vector<Interval>>> by_group(n);
  double first = std::numeric_limits<double>::max();
  double last = std::numeric_limits<double>::lowest();
  for (const TimelineEvent* e : events) {
    if (e == nullptr) continue;
    const Op& op = ops_of(set, e->rank).at(e->op);
    first = std::min(first, e->start.value());
    last = std::max(last, e->end.value());
    const std::string group = charge_group(set, e->rank, op);
    const auto r = static_cast<std::size_t>(e->rank);
    if (group == "compute") {
      compute[r].push_back(Interval{e->start.value(), e->end.value()});
    } else {
      const Interval moving{arrivals.data_start(e->rank, e->op, e->start.value()), e->end.value()};
      comm[r].push_back(moving);
      by_group[r][group].push_back(moving);
    }
  }
  if (first > last) return b;  // no events for this step
  b.step_time = Seconds(last - first);
  for (std::size_t r = 0; r < n; ++r) {
    RankBreakdown rb;
    rb.rank = static_cast<int>(r);
    rb.compute = Seconds(union_length(compute[r]));
    rb.exposed_comm = Seconds(uncovered_length(comm[r], compute[r]));
    rb.bubble = b.step_time - rb.compute - rb.exposed_comm;
    for (const auto& [group, intervals] : by_group[r]) {
      rb.groups[group] = GroupTime{Seconds(union_length(intervals)), Seconds(uncovered_length(intervals, compute[r]))};
    }
    b.compute += rb.compute / static_cast<double>(n);
    b.exposed_comm += rb.exposed_comm / static_cast<double>(n);
    for (const auto& [group, t] : rb.groups) {
      b.groups[group].busy += t.busy / static_cast<double>(n);
      b.groups[group].exposed += t.exposed / static_cast<double>(n);
    }
    b.ranks.push_back(std::move(rb));
  }
  b.bubble = b.step_time - b.compute - b.exposed_comm;
  return b;
}

}  // namespace commscale

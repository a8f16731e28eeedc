#include "program/breakdown.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace commscale {
namespace {

// Sorted, merged intervals.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.end <= i.start) continue;
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// Where each communication op of the step starts moving data: the latest start of the calls it is
// matched with. Keyed by (rank, op id).
class Arrivals {
 public:
  Arrivals(const ProgramSet& set, const std::vector<const TimelineEvent*>& by_rank_op, const std::vector<std::size_t>& base)
      : set_(set), events_(by_rank_op), base_(base) {
    for (int r = 0; r < set.world_size; ++r) visit_rank(r);
  }

  [[nodiscard]] double data_start(int rank, OpId op, double own_start) const {
    const auto it = latest_.find(key_of_[base_[static_cast<std::size_t>(rank)] + op]);
    return it == latest_.end() ? own_start : std::max(own_start, it->second);
  }

 private:
  // A collective is the k-th call on its group instance (handle, lowest member); a transfer the k-th
  // one from sender to receiver on its group.
  using Key = std::tuple<int, std::uint32_t, int, int, std::uint64_t>;

  void visit_rank(int r) {
    const RankProgram& rp = set_.ranks[static_cast<std::size_t>(r)];
    std::map<std::tuple<std::uint32_t, int, int>, std::uint64_t> counts;
    const auto& ops = ops_of(set_, r);
    for (const Op& op : ops) {
      const TimelineEvent* e = events_[base_[static_cast<std::size_t>(r)] + op.id];
      Key key{-1, 0, 0, 0, 0};
      if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
        const auto& members = rp.groups.at(c->group).members;
        const int lowest = *std::min_element(members.begin(), members.end());
        key = Key{0, c->group, lowest, 0, counts[{c->group, lowest, -1}]++};
      } else if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
        const int peer = world_peer(rp, *p);
        const bool send = p->direction == P2pDirection::kSend;
        const int from = send ? r : peer;
        const int to = send ? peer : r;
        key = Key{1, p->group, from, to, counts[{p->group, from, to}]++};
      }
      key_of_.push_back(key);
      if (std::get<0>(key) < 0 || e == nullptr) continue;
      double& latest = latest_[key];
      latest = std::max(latest, e->start.value());
    }
  }

  const ProgramSet& set_;
  const std::vector<const TimelineEvent*>& events_;
  const std::vector<std::size_t>& base_;
  std::vector<Key> key_of_;  // indexed like events_
  std::map<Key, double> latest_;
};

}  // namespace

double union_length(std::vector<Interval> intervals) {
  double total = 0.0;
  for (const Interval& i : merged(std::move(intervals))) total += i.end - i.start;
  return total;
}

double uncovered_length(std::vector<Interval> a, std::vector<Interval> b) {
  const std::vector<Interval> ua = merged(std::move(a));
  const std::vector<Interval> ub = merged(std::move(b));
  double covered = 0.0;
  std::size_t j = 0;
  for (const Interval& x : ua) {
    while (j < ub.size() && ub[j].end <= x.start) ++j;
    for (std::size_t k = j; k < ub.size() && ub[k].start < x.end; ++k) {
      covered += std::min(x.end, ub[k].end) - std::max(x.start, ub[k].start);
    }
  }
  return union_length(ua) - covered;
}

std::string charge_group(const ProgramSet& set, int rank, const Op& op) {
  const RankProgram& rp = set.ranks.at(static_cast<std::size_t>(rank));
  std::uint32_t handle = 0;
  if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
    handle = c->group;
  } else if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
    handle = p->group;
  } else {
    return "compute";
  }
  const std::string& group = rp.groups.at(handle).name;
  return group.rfind("pp", 0) == 0 ? "pp" : group;
}

StepBreakdown break_down_step(const ProgramSet& set, const Timeline& timeline, int step) {
  StepBreakdown b;
  b.step = step;
  const auto n = static_cast<std::size_t>(set.world_size);
  // The step's event of every (rank, op), for matching communication calls across ranks.
  std::vector<std::size_t> base(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) base[r + 1] = base[r] + ops_of(set, static_cast<int>(r)).size();
  std::vector<const TimelineEvent*> events(base[n], nullptr);
  for (const TimelineEvent& e : timeline.events) {
    if (e.step == step) events[base[static_cast<std::size_t>(e.rank)] + e.op] = &e;
  }
  const Arrivals arrivals(set, events, base);

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

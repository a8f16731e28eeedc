#include "program/timeline_diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace commscale {
namespace {

bool numbered(std::string_view token, std::string_view prefix) {
  if (token.size() <= prefix.size() || token.substr(0, prefix.size()) != prefix) return false;
  return std::all_of(token.begin() + static_cast<std::ptrdiff_t>(prefix.size()), token.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// Mean duration per (rank, op) over the steps it appears in; index base[rank] + op. `parts`: the
// attribution's sums likewise, empty where the timeline has none.
struct Durations {
  std::vector<double> sum;
  std::vector<int> count;
  std::vector<AttributionSums> parts;
};

void add(AttributionSums& to, const AttributionSums& x, double scale) {
  to.host_s += x.host_s * scale;
  to.peers_s += x.peers_s * scale;
  to.latency_s += x.latency_s * scale;
  to.interference_s += x.interference_s * scale;
}

Durations durations(const ProgramSet& set, const Timeline& t, const std::vector<std::size_t>& base) {
  Durations d{std::vector<double>(base.back(), 0.0), std::vector<int>(base.back(), 0), {}};
  if (!t.attribution.empty()) d.parts.assign(base.back(), {});
  for (std::size_t k = 0; k < t.events.size(); ++k) {
    const TimelineEvent& e = t.events[k];
    const std::size_t i = base[static_cast<std::size_t>(e.rank)] + e.op;
    d.sum[i] += (e.end - e.start).value();
    ++d.count[i];
    if (d.parts.empty()) continue;
    const EventAttribution& a = t.attribution[k];
    add(d.parts[i], {a.host.value(), a.peers.value(), a.latency.value(), a.interference.value()}, 1.0);
  }
  (void)set;
  return d;
}

double mean_of(const Durations& d, std::size_t i) { return d.count[i] > 0 ? d.sum[i] / d.count[i] : 0.0; }

// The attribution of (rank, op) i, mean over its steps, times `scale`; none where the timeline has none.
std::optional<AttributionSums> parts_of(const Durations& d, std::size_t i, double scale = 1.0) {
  if (d.parts.empty()) return std::nullopt;
  AttributionSums out;
  if (d.count[i] > 0) add(out, d.parts[i], scale / d.count[i]);
  return out;
}

// Adds a part to a sum that exists where the timeline has attribution.
void accumulate(std::optional<AttributionSums>& to, const std::optional<AttributionSums>& x) {
  if (!x) return;
  if (!to) to.emplace();
  add(*to, *x, 1.0);
}

// Means over a timeline's steps of its step breakdowns.
struct StepMeans {
  double step = 0, compute = 0, exposed = 0, bubble = 0;
  std::map<std::string, double> groups;
};

StepMeans means(const std::vector<StepBreakdown>& steps) {
  StepMeans m;
  const double n = static_cast<double>(std::max<std::size_t>(steps.size(), 1));
  for (const StepBreakdown& b : steps) {
    m.step += b.step_time.value() / n;
    m.compute += b.compute.value() / n;
    m.exposed += b.exposed_comm.value() / n;
    m.bubble += b.bubble.value() / n;
    for (const auto& [g, t] : b.groups) m.groups[g] += t.exposed.value() / n;
  }
  return m;
}

std::vector<StepBreakdown> breakdowns(const ProgramSet& set, const Timeline& t) {
  std::vector<StepBreakdown> out;
  for (int s = 0; s < t.steps; ++s) out.push_back(break_down_step(set, t, s));
  return out;
}

void by_magnitude(std::vector<TimeComparison>& v) {
  std::stable_sort(v.begin(), v.end(), [](const TimeComparison& x, const TimeComparison& y) {
    return std::abs(x.difference()) > std::abs(y.difference());
  });
}

}  // namespace

std::string op_kind(std::string_view name) {
  std::string out;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    const std::string_view token = name.substr(start, dot - start);
    std::string kept;
    if (numbered(token, "mb") || numbered(token, "c")) {
      kept.clear();
    } else if (numbered(token, "L")) {
      kept = "L*";
    } else if (numbered(token, "bucket")) {
      kept = "bucket*";
    } else {
      kept = std::string(token);
    }
    if (!kept.empty()) out += (out.empty() ? "" : ".") + kept;
    start = dot + 1;
  }
  return out;
}

TimelineDiff diff_timelines(const ProgramSet& set, const Timeline& a, const Timeline& b, const std::string& name_a,
                            const std::string& name_b, std::size_t top) {
  validate_timeline(set, a, name_a);
  validate_timeline(set, b, name_b);
  TimelineDiff d;
  d.engine_a = a.engine;
  d.engine_b = b.engine;
  d.steps_a = a.steps;
  d.steps_b = b.steps;
  const std::vector<StepBreakdown> sa = breakdowns(set, a);
  const std::vector<StepBreakdown> sb = breakdowns(set, b);
  for (int s = 0; s < std::min(a.steps, b.steps); ++s)
    d.steps.push_back({s, sa[static_cast<std::size_t>(s)], sb[static_cast<std::size_t>(s)]});
  const StepMeans ma = means(sa);
  const StepMeans mb = means(sb);
  d.step_time = {"step_time", "", 0, ma.step, mb.step};
  d.compute = {"compute", "", 0, ma.compute, mb.compute};
  d.exposed_comm = {"exposed_comm", "", 0, ma.exposed, mb.exposed};
  d.bubble = {"bubble", "", 0, ma.bubble, mb.bubble};
  std::map<std::string, TimeComparison> groups;
  for (const auto& [g, t] : ma.groups) groups[g] = {g, "", 0, t, 0};
  for (const auto& [g, t] : mb.groups) groups.try_emplace(g, TimeComparison{g, "", 0, 0, 0}).first->second.b_s = t;
  for (const auto& [g, t] : groups) d.groups.push_back(t);

  const auto n = static_cast<std::size_t>(set.world_size);
  std::vector<std::size_t> base(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) base[r + 1] = base[r] + ops_of(set, static_cast<int>(r)).size();
  const Durations da = durations(set, a, base);
  const Durations db = durations(set, b, base);
  std::vector<TimeComparison> streams(kStreamCount);
  for (int s = 0; s < kStreamCount; ++s)
    streams[static_cast<std::size_t>(s)].key = std::string(name(static_cast<Stream>(s)));
  std::map<std::pair<int, std::string>, TimeComparison> kinds;
  std::map<std::pair<int, std::size_t>, std::string> kind_of_op;  // (program, op) -> kind, computed once
  for (std::size_t r = 0; r < n; ++r) {
    const int program = set.ranks[r].program;
    const auto& ops = ops_of(set, static_cast<int>(r));
    for (std::size_t op = 0; op < ops.size(); ++op) {
      const double x = mean_of(da, base[r] + op) / static_cast<double>(n);
      const double y = mean_of(db, base[r] + op) / static_cast<double>(n);
      const std::optional<AttributionSums> pa = parts_of(da, base[r] + op, 1.0 / static_cast<double>(n));
      const std::optional<AttributionSums> pb = parts_of(db, base[r] + op, 1.0 / static_cast<double>(n));
      accumulate(d.a_parts, pa);
      accumulate(d.b_parts, pb);
      TimeComparison& st = streams[static_cast<std::size_t>(ops[op].stream)];
      st.a_s += x;
      st.b_s += y;
      auto [known, added] = kind_of_op.try_emplace({program, op});
      if (added) known->second = op_kind(ops[op].name);
      TimeComparison& k = kinds[{static_cast<int>(ops[op].stream), known->second}];
      k.key = known->second;
      k.stream = std::string(name(ops[op].stream));
      k.count += 1.0 / static_cast<double>(n);
      k.a_s += x;
      k.b_s += y;
      accumulate(k.a_parts, pa);
      accumulate(k.b_parts, pb);
    }
  }
  for (int s = 0; s < kStreamCount; ++s) {
    const auto stream = static_cast<Stream>(s);
    const bool listed = std::any_of(set.programs.begin(), set.programs.end(),
                                    [&](const std::vector<Op>& ops) { return listed_stream(ops, stream); });
    if (listed) d.streams.push_back(streams[static_cast<std::size_t>(s)]);
  }
  for (auto& [key, k] : kinds) d.kinds.push_back(k);
  by_magnitude(d.kinds);
  for (std::size_t r = 0; r < n; ++r) {
    const auto& ops = ops_of(set, static_cast<int>(r));
    for (std::size_t op = 0; op < ops.size(); ++op) {
      d.ops.push_back({fmt::format("rank {} op {} {}", r, op, ops[op].name), std::string(name(ops[op].stream)), 1,
                       mean_of(da, base[r] + op), mean_of(db, base[r] + op), parts_of(da, base[r] + op),
                       parts_of(db, base[r] + op)});
    }
  }
  const std::size_t keep = std::min(top, d.ops.size());
  std::partial_sort(d.ops.begin(), d.ops.begin() + static_cast<std::ptrdiff_t>(keep), d.ops.end(),
                    [](const TimeComparison& x, const TimeComparison& y) {
                      return std::abs(x.difference()) > std::abs(y.difference());
                    });
  d.ops.resize(keep);
  return d;
}

}  // namespace commscale

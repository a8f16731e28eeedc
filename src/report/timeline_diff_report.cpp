// The timeline difference as JSON and as text (timeline_diff.hpp).

#include <array>
#include <cmath>
#include <optional>
#include <ostream>
#include <utility>

#include <fmt/format.h>

#include "report/timeline_diff_report.hpp"

namespace commscale {
namespace {

nlohmann::json parts_json(const AttributionSums& p) {
  return {
      {"host_s", p.host_s}, {"peers_s", p.peers_s}, {"latency_s", p.latency_s}, {"interference_s", p.interference_s}};
}

nlohmann::json row(const TimeComparison& t) {
  nlohmann::json j = {
      {"key", t.key}, {"a_s", t.a_s}, {"b_s", t.b_s}, {"diff_s", t.difference()}, {"relative", t.relative()}};
  if (!t.stream.empty()) j["stream"] = t.stream;
  if (t.count > 0) j["per_rank_per_step"] = t.count;
  if (t.a_parts) j["a_attribution"] = parts_json(*t.a_parts);
  if (t.b_parts) j["b_attribution"] = parts_json(*t.b_parts);
  return j;
}

nlohmann::json rows(const std::vector<TimeComparison>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (const TimeComparison& t : v) out.push_back(row(t));
  return out;
}

// Rounding residues (a bubble of -1e-17 s) print as 0 rather than -0.000000.
double tidy(double seconds) { return std::abs(seconds) < 5e-13 ? 0.0 : seconds; }

std::string line(const TimeComparison& t) {
  const double relative = tidy(t.difference()) == 0.0 ? 0.0 : t.relative();
  return fmt::format("{:>12.6f} {:>12.6f} {:>+12.6f} {:>+8.1f}%", tidy(t.a_s), tidy(t.b_s), tidy(t.difference()),
                     100 * relative);
}

// The attribution columns of a side that has attribution (the header, or a row's parts).
std::string parts_header(const TimelineDiff& d) {
  std::string out;
  for (const auto& [side, parts] : {std::pair{"A", &d.a_parts}, std::pair{"B", &d.b_parts}}) {
    if (!*parts) continue;
    out += fmt::format("  {:>9} {:>9} {:>9} {:>9}", fmt::format("{} host", side), fmt::format("{} peers", side),
                       fmt::format("{} latency", side), fmt::format("{} interf", side));
  }
  return out;
}

std::string parts_columns(const TimelineDiff& d, const TimeComparison& t) {
  std::string out;
  for (const auto& [shown, parts] :
       {std::pair{d.a_parts.has_value(), &t.a_parts}, std::pair{d.b_parts.has_value(), &t.b_parts}}) {
    if (!shown) continue;
    const AttributionSums p = parts->value_or(AttributionSums{});
    out += fmt::format("  {:>9.6f} {:>9.6f} {:>9.6f} {:>9.6f}", tidy(p.host_s), tidy(p.peers_s), tidy(p.latency_s),
                       tidy(p.interference_s));
  }
  return out;
}

// The step's attribution totals, each as a row of the step section: a side without attribution shows "-".
void print_parts_totals(std::ostream& out, const TimelineDiff& d) {
  if (!d.a_parts && !d.b_parts) return;
  const auto value = [](const std::optional<AttributionSums>& p, double AttributionSums::*part) {
    return p ? fmt::format("{:>12.6f}", tidy((*p).*part)) : fmt::format("{:>12}", "-");
  };
  const std::array<std::pair<const char*, double AttributionSums::*>, 4> parts = {
      {{"attributed: host", &AttributionSums::host_s},
       {"attributed: peers", &AttributionSums::peers_s},
       {"attributed: latency", &AttributionSums::latency_s},
       {"attributed: interference", &AttributionSums::interference_s}}};
  for (const auto& [label, part] : parts) {
    if (d.a_parts && d.b_parts) {
      out << fmt::format("{:<34} {}\n", label, line({"", "", 0, (*d.a_parts).*part, (*d.b_parts).*part}));
    } else {
      out << fmt::format("{:<34} {} {}\n", label, value(d.a_parts, part), value(d.b_parts, part));
    }
  }
}

}  // namespace

nlohmann::json diff_to_json(const TimelineDiff& d) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepComparison& s : d.steps) {
    steps.push_back({{"step", s.step},
                     {"a",
                      {{"step_time_s", s.a.step_time.value()},
                       {"compute_s", s.a.compute.value()},
                       {"exposed_comm_s", s.a.exposed_comm.value()},
                       {"bubble_s", s.a.bubble.value()}}},
                     {"b",
                      {{"step_time_s", s.b.step_time.value()},
                       {"compute_s", s.b.compute.value()},
                       {"exposed_comm_s", s.b.exposed_comm.value()},
                       {"bubble_s", s.b.bubble.value()}}}});
  }
  nlohmann::json out = {{"schema_version", 1},
                        {"kind", "commscale-timeline-diff"},
                        {"a", {{"engine", d.engine_a}, {"steps", d.steps_a}}},
                        {"b", {{"engine", d.engine_b}, {"steps", d.steps_b}}},
                        {"mean", rows({d.step_time, d.compute, d.exposed_comm, d.bubble})},
                        {"exposed_by_group", rows(d.groups)},
                        {"steps", steps},
                        {"streams", rows(d.streams)},
                        {"op_kinds", rows(d.kinds)},
                        {"ops", rows(d.ops)}};
  // Per rank and step, mean over ranks and steps, of each side that has attribution.
  if (d.a_parts) out["attribution_per_rank_per_step"]["a"] = parts_json(*d.a_parts);
  if (d.b_parts) out["attribution_per_rank_per_step"]["b"] = parts_json(*d.b_parts);
  return out;
}

void print_diff(std::ostream& out, const TimelineDiff& d, std::size_t top) {
  out << fmt::format("A: {} ({} steps)   B: {} ({} steps); differences are B - A, relative to A\n", d.engine_a,
                     d.steps_a, d.engine_b, d.steps_b);
  const std::string header = fmt::format("{:>12} {:>12} {:>12} {:>9}", "A s", "B s", "B - A s", "B/A - 1");
  out << fmt::format("\nper step, mean over steps and ranks\n{:<34} {}\n", "", header);
  for (const TimeComparison& t : {d.step_time, d.compute, d.exposed_comm, d.bubble}) {
    out << fmt::format("{:<34} {}\n", t.key, line(t));
  }
  for (const TimeComparison& t : d.groups) out << fmt::format("{:<34} {}\n", "exposed " + t.key, line(t));
  print_parts_totals(out, d);
  if (d.steps.size() > 1) {
    out << "\nstep by step (step time)\n";
    for (const StepComparison& s : d.steps) {
      const TimeComparison t{"", "", 0, s.a.step_time.value(), s.b.step_time.value()};
      out << fmt::format("{:<34} {}\n", fmt::format("step {}", s.step), line(t));
    }
  }
  out << fmt::format("\nper stream: time its ops take, per rank and step\n{:<34} {}\n", "", header);
  for (const TimeComparison& t : d.streams) out << fmt::format("{:<34} {}\n", t.key, line(t));
  out << fmt::format("\nper op kind, largest differences first (per rank and step)\n{:<34} {}{}  {:>7} {}\n", "",
                     header, parts_header(d), "count", "stream");
  for (std::size_t i = 0; i < d.kinds.size() && i < top; ++i) {
    const TimeComparison& t = d.kinds[i];
    out << fmt::format("{:<34} {}{}  {:>7.1f} {}\n", t.key, line(t), parts_columns(d, t), t.count, t.stream);
  }
  out << fmt::format("\nper op, largest differences first (mean over steps)\n");
  if (d.a_parts || d.b_parts) out << fmt::format("{:<60} {}{}\n", "", header, parts_header(d));
  for (const TimeComparison& t : d.ops) out << fmt::format("{:<60} {}{}\n", t.key, line(t), parts_columns(d, t));
}

}  // namespace commscale

// The timeline difference as JSON and as text (timeline_diff.hpp).

#include <cmath>
#include <ostream>

#include <fmt/format.h>

#include "report/timeline_diff_report.hpp"

namespace commscale {
namespace {

nlohmann::json row(const TimeComparison& t) {
  nlohmann::json j = {
      {"key", t.key}, {"a_s", t.a_s}, {"b_s", t.b_s}, {"diff_s", t.difference()}, {"relative", t.relative()}};
  if (!t.stream.empty()) j["stream"] = t.stream;
  if (t.count > 0) j["per_rank_per_step"] = t.count;
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
  return {{"schema_version", 1},
          {"kind", "commscale-timeline-diff"},
          {"a", {{"engine", d.engine_a}, {"steps", d.steps_a}}},
          {"b", {{"engine", d.engine_b}, {"steps", d.steps_b}}},
          {"mean", rows({d.step_time, d.compute, d.exposed_comm, d.bubble})},
          {"exposed_by_group", rows(d.groups)},
          {"steps", steps},
          {"streams", rows(d.streams)},
          {"op_kinds", rows(d.kinds)},
          {"ops", rows(d.ops)}};
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
  if (d.steps.size() > 1) {
    out << "\nstep by step (step time)\n";
    for (const StepComparison& s : d.steps) {
      const TimeComparison t{"", "", 0, s.a.step_time.value(), s.b.step_time.value()};
      out << fmt::format("{:<34} {}\n", fmt::format("step {}", s.step), line(t));
    }
  }
  out << fmt::format("\nper stream: time its ops take, per rank and step\n{:<34} {}\n", "", header);
  for (const TimeComparison& t : d.streams) out << fmt::format("{:<34} {}\n", t.key, line(t));
  out << fmt::format("\nper op kind, largest differences first (per rank and step)\n{:<34} {}  {:>7} {}\n", "", header,
                     "count", "stream");
  for (std::size_t i = 0; i < d.kinds.size() && i < top; ++i) {
    const TimeComparison& t = d.kinds[i];
    out << fmt::format("{:<34} {}  {:>7.1f} {}\n", t.key, line(t), t.count, t.stream);
  }
  out << fmt::format("\nper op, largest differences first (mean over steps)\n");
  for (const TimeComparison& t : d.ops) out << fmt::format("{:<60} {}\n", t.key, line(t));
}

}  // namespace commscale

#include "program/step_summary.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/stats.hpp"

namespace commscale {

double median_of(std::vector<double> values) { return summarize(values).median; }

JobSummary summarize_steps(const StepSummaryInputs& in) {
  JobSummary s;
  s.world_size = in.set->world_size;
  std::vector<double> compute;
  std::vector<double> exposed;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  if (in.timeline != nullptr) {
    for (int step = 0; step < in.timeline->steps; ++step) {
      StepBreakdown b = break_down_step(*in.set, *in.timeline, step);
      compute.push_back(b.compute.value());
      exposed.push_back(b.exposed_comm.value());
      for (const auto& [name, t] : b.groups) {
        groups[name].first.push_back(t.busy.value());
        groups[name].second.push_back(t.exposed.value());
      }
      s.steps.push_back(std::move(b));
    }
  }
  s.step_time_s = !in.step_s.empty() ? median_of(in.step_s) : median_of(in.step_only_s);
  if (!in.step_only_s.empty()) s.step_only_time_s = median_of(in.step_only_s);
  if (!in.step_s.empty() && !in.step_only_s.empty()) s.per_op_overhead = s.step_time_s / *s.step_only_time_s - 1.0;
  s.compute_s = median_of(compute);
  s.exposed_comm_s = median_of(exposed);
  // What neither computes nor waits on a transfer: the pipeline's fill and drain, and stragglers.
  s.bubble_s = std::max(0.0, s.step_time_s - s.compute_s - s.exposed_comm_s);
  for (const auto& [name, times] : groups) {
    s.groups[name] = GroupTime{Seconds(median_of(times.first)), Seconds(median_of(times.second))};
  }
  if (s.step_time_s > 0) {
    const double per_gpu = s.step_time_s * s.world_size;
    s.tflops_per_gpu = in.model_flops.value() / per_gpu / 1e12;
    s.hardware_tflops_per_gpu = in.hardware_flops.value() / per_gpu / 1e12;
    s.tokens_per_s = in.tokens_per_step / s.step_time_s;
    if (in.peak && in.peak->value() > 0) {
      s.mfu = s.tflops_per_gpu * 1e12 / in.peak->value();
      s.hfu = s.hardware_tflops_per_gpu * 1e12 / in.peak->value();
    }
  }
  return s;
}

void to_json(nlohmann::json& out, const JobSummary& s) {
  auto optional = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [name, t] : s.groups) groups[name] = {{"busy_s", t.busy.value()}, {"exposed_s", t.exposed.value()}};
  out = {{"world_size", s.world_size},
         {"step_time_s", s.step_time_s},
         {"compute_s", s.compute_s},
         {"exposed_comm_s", s.exposed_comm_s},
         {"bubble_s", s.bubble_s},
         {"groups", groups},
         {"tflops_per_gpu", s.tflops_per_gpu},
         {"hardware_tflops_per_gpu", s.hardware_tflops_per_gpu},
         {"mfu", optional(s.mfu)},
         {"hfu", optional(s.hfu)},
         {"tokens_per_s", s.tokens_per_s},
         {"step_only_time_s", optional(s.step_only_time_s)},
         {"per_op_overhead", optional(s.per_op_overhead)}};
}

std::map<std::string, GroupTime> group_times_from_json(const JsonAt& in) {
  std::map<std::string, GroupTime> out;
  if (!in.has("groups") || !in.at("groups").value().is_object()) return out;
  const JsonAt groups = in.at("groups");
  for (const auto& [name, value] : groups.value().items()) {
    const JsonAt g = groups.at(name);
    out[name] = GroupTime{Seconds(g.number_or("busy_s", 0.0)), Seconds(g.number("exposed_s"))};
  }
  return out;
}

void from_json(const JsonAt& in, JobSummary& s) {
  s = JobSummary{};
  s.world_size = static_cast<int>(in.number_or("world_size", 0));
  s.step_time_s = in.number("step_time_s");
  s.compute_s = in.number("compute_s");
  s.exposed_comm_s = in.number("exposed_comm_s");
  s.bubble_s = in.number("bubble_s");
  s.groups = group_times_from_json(in);
  s.tflops_per_gpu = in.number_or("tflops_per_gpu", 0.0);
  s.hardware_tflops_per_gpu = in.number_or("hardware_tflops_per_gpu", 0.0);
  s.mfu = in.optional_number("mfu");
  s.hfu = in.optional_number("hfu");
  s.tokens_per_s = in.number_or("tokens_per_s", 0.0);
  s.step_only_time_s = in.optional_number("step_only_time_s");
  s.per_op_overhead = in.optional_number("per_op_overhead");
}

void to_json(nlohmann::json& out, const GemmCheck& c) {
  const Gemm& g = c.gemm;
  out = {{"m", g.m},
         {"n", g.n},
         {"k", g.k},
         {"batch", g.batch},
         {"dtype", name(g.dtype)},
         {"calls_per_step", c.calls_per_step},
         {"in_step_us", c.in_step_s * 1e6},
         {"standalone_us", c.standalone_s * 1e6},
         {"in_step_tflops", c.in_step_s > 0 ? g.flops.value() / c.in_step_s / 1e12 : 0.0},
         {"standalone_tflops", c.standalone_s > 0 ? g.flops.value() / c.standalone_s / 1e12 : 0.0},
         {"in_step_over_standalone_rate", c.ratio()}};
}

}  // namespace commscale

#pragma once

// The job's figures for a training step, from measured (or predicted) steps: the names `train` and
// `predict` both report (step_time_s, compute_s, exposed_comm_s, bubble_s, tflops_per_gpu, mfu,
// tokens_per_s). Medians over the timed steps.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/json_at.hpp"
#include "core/units.hpp"
#include "program/breakdown.hpp"
#include "program/timeline.hpp"

namespace commscale {

struct StepSummaryInputs {
  const ProgramSet* set = nullptr;
  const Timeline* timeline = nullptr;  // per-op steps (may have none)
  std::vector<double> step_s;          // the step time of each per-op step (the slowest rank's)
  std::vector<double> step_only_s;     // steps timed as a whole only
  Flops model_flops;                   // per step, without recompute (the MFU basis)
  Flops hardware_flops;                // per step, every GEMM actually run (the HFU basis)
  double tokens_per_step = 0.0;        // global batch x sequence length
  std::optional<FlopsPerSecond> peak;  // dense rate of one GPU for the step's type; none on the CPU backend
};

struct JobSummary {
  int world_size = 0;
  double step_time_s = 0.0;  // median; from per-op steps when there are any, else step-only steps
  double compute_s = 0.0;    // median of the per-rank mean; compute + exposed + bubble = step_time_s
  double exposed_comm_s = 0.0;
  double bubble_s = 0.0;
  std::map<std::string, GroupTime> groups;  // median busy and exposed time per group
  double tflops_per_gpu = 0.0;              // model FLOPs / step time / GPUs
  double hardware_tflops_per_gpu = 0.0;     // hardware FLOPs (recompute included) / step time / GPUs
  std::optional<double> mfu;
  std::optional<double> hfu;
  double tokens_per_s = 0.0;
  std::optional<double> step_only_time_s;   // median of steps timed as a whole
  std::optional<double> per_op_overhead;    // per-op step time / step-only step time - 1
  std::vector<StepBreakdown> steps;         // each per-op step
};

[[nodiscard]] JobSummary summarize_steps(const StepSummaryInputs& in);

// One GEMM shape of a step: its median time inside the timed steps, and alone (the same library call,
// back to back, on fresh operands each call). The executor's check that running inside a step costs
// a GEMM nothing.
struct GemmCheck {
  Gemm gemm;
  int calls_per_step = 0;
  double in_step_s = 0.0;
  double standalone_s = 0.0;
  [[nodiscard]] double ratio() const noexcept { return in_step_s > 0 ? standalone_s / in_step_s : 0.0; }
};
void to_json(nlohmann::json& out, const GemmCheck& c);

[[nodiscard]] double median_of(std::vector<double> values);

void to_json(nlohmann::json& out, const JobSummary& s);
// The inverse of to_json, for `commscale report`. Required: the four figures every step view draws
// (step_time_s, compute_s, exposed_comm_s, bubble_s, and exposed_s of each group); the rest is read
// when present (absent or null: the default). Errors name the file and key (JsonAt). `steps` stays
// empty: to_json does not write it.
void from_json(const JsonAt& in, JobSummary& s);
// in.groups as to_json writes it ({"dp": {"busy_s", "exposed_s"}, ...}): exposed_s required, busy_s
// 0 when absent; no groups when the key is absent or not an object.
[[nodiscard]] std::map<std::string, GroupTime> group_times_from_json(const JsonAt& in);

}  // namespace commscale

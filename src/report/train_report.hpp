#pragma once

// Reporters for `commscale train`: a text summary for people, a JSON document (schema_version, the
// context block, model, plan, the job summary with the figure names `predict` shares, every step's
// breakdown per rank) and a CSV with one line per step and rank.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/units.hpp"
#include "parallel/plan.hpp"
#include "program/comm_rates.hpp"
#include "program/host_costs.hpp"
#include "program/step_summary.hpp"
#include "workload/transformer.hpp"
#include "core/run_context.hpp"

namespace commscale {

inline constexpr int kTrainSchemaVersion = 1;

struct TrainReport {
  RunContext context;
  TransformerConfig model;
  ParallelPlan plan;
  JobSummary summary;
  std::string method;  // how ops ran and were timed
  std::string timing;  // per-op, step, or both
  int warmup_steps = 0;
  int steps = 0;
  Bytes pool;      // memory allocated per rank for the step's data
  Bytes modelled;  // what the memory model counts (without its workspace allowance)
  std::string gpu;                   // catalog GPU the MFU refers to ("" on the CPU backend)
  std::string math;                  // the rate used as peak: "bf16 tensor, fp32 accumulate"
  std::optional<double> peak_tflops;
  std::vector<double> step_s;       // per-op steps
  std::vector<double> step_only_s;  // step-only steps
  std::vector<GemmCheck> gemm_checks;  // --gemm-check
  std::vector<CommRate> comm_rates;    // per-op steps: the bandwidth of each kind of call inside the step
  std::optional<HostCosts> host;       // --host-framework: the host costs ops were issued at
};

void print_train_text(std::ostream& out, const TrainReport& report);
[[nodiscard]] nlohmann::json train_json(const TrainReport& report);
[[nodiscard]] std::string train_csv(const TrainReport& report);

}  // namespace commscale

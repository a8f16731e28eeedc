#pragma once

// `predict` end to end: a prepared step (parallel/prepared_step.hpp: the program built and checked, its
// memory sized for the target's GPU) costed and simulated on a target (simulator.hpp), and reported
// with the figures and names of `train`'s job summary (program/step_summary.hpp).

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parallel/plan.hpp"
#include "parallel/plan_memory.hpp"
#include "parallel/prepared_step.hpp"
#include "predict/simulator.hpp"
#include "predict/target.hpp"
#include "program/breakdown.hpp"
#include "program/step_summary.hpp"
#include "workload/transformer.hpp"

namespace commscale::predict {

inline constexpr int kPredictionSchemaVersion = 1;

struct PredictOptions {
  bool reduce = true;            // simulate one rank per symmetry class
  bool keep_simulation = false;  // keep the simulation (for --timeline and --trace)
};

// One group name's communication: its slowest instance's links and the step's time on it.
struct GroupReport {
  std::string name;  // "tp", "dp", "pp", "embedding"; "offload": copies to and from host memory over PCIe
  int ranks = 0;
  int nodes = 0;
  hw::PathClass link = hw::PathClass::kNvlink;  // the class that limits its bandwidth
  GBps bus_bw{0.0};                             // ring capacity (transfers: path bandwidth)
  Seconds busy;                                 // mean per rank per step (breakdown)
  Seconds exposed;
};

struct Prediction {
  TransformerConfig model;
  ParallelPlan plan;
  std::string cluster;
  std::string cluster_file;
  std::string gpu;
  int nodes = 1;
  int gpus_per_node = 1;
  std::string calibration;  // the profile's file, empty without one
  JobSummary summary;       // step_time_s, compute_s, exposed_comm_s, bubble_s, mfu, tokens_per_s, ...
  std::vector<GroupReport> groups;
  std::map<std::string, Seconds> exposed_by_link;  // path class name -> exposed seconds (mean per rank)
  Flops model_flops;
  Flops hardware_flops;
  FlopsPerSecond peak;
  std::vector<StageMemory> memory;
  FitVerdict fit;
  // The host that issued the ops (Target::host): its framework, the host time it spends issuing one
  // rank's step (the busiest simulated rank), and the time the GPU's compute stream stood ready but
  // for the host (mean per rank, part of the bubble).
  std::string host_framework;
  std::string host_source;
  bool host_sync_after_p2p = false;  // the host waits for the GPU after each pipeline send/receive
  Seconds host_issue;
  Seconds host_wait;
  // Interference (interference.hpp): where its figures came from ("" without), the time it added to
  // compute and to communication (mean per rank), and how many re-simulations it took.
  std::string interference_source;
  Seconds interference_compute;
  Seconds interference_comm;
  int interference_iterations = 0;
  // The clock (clock.hpp): where its curve came from ("" without), the GEMMs' share of the step and
  // their speedup over the rows' rates (means over simulated ranks), and the re-simulations it took.
  std::string clock_source;
  double clock_gemm_share = 0.0;
  double clock_speedup = 1.0;
  int clock_iterations = 0;
  std::vector<std::string> notes;
  // What the prediction was checked against for this GPU and framework, or a warning that it never was
  // (validation_coverage.hpp).
  std::string validation;
  int simulated_ranks = 0;
  std::size_t simulated_ops = 0;
  std::optional<Simulation> simulation;  // with keep_simulation: of the step's program
  // With keep_simulation: where each op of each simulated rank spent its time (program/timeline.hpp):
  // the host's hold (Simulation::host_hold), a communication op's wait for its peers (data start -
  // start) and the latency term of its cost (ProgramCosts::latency), and the time interference added
  // to its duration (over its duration under the costs it had before interference).
  SimAttribution attribution;
};

// Prepares the plan's step for the target: its ranks checked against the target's GPUs first
// (InputError naming --world), then the program built and checked and its memory fitted to the GPU's.
[[nodiscard]] PreparedStep prepare_for(const CheckedPlan& plan, const Target& target, const MemoryOptions& memory);

// The step must have been prepared for the target (prepare_for), and be free of deadlocks
// (RuntimeFailure otherwise).
[[nodiscard]] Prediction predict_step(const PreparedStep& step, const Target& target, const PredictOptions& options = {});

}  // namespace commscale::predict

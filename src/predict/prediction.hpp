#pragma once

// `predict` end to end: build the step program of a plan (parallel/program_builder.hpp), check it and
// size its memory (parallel/plan_summary.hpp), cost and simulate it on a target (simulator.hpp), and
// report it with the figures and names of `train`'s job summary (program/step_summary.hpp).

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parallel/plan.hpp"
#include "parallel/plan_memory.hpp"
#include "predict/simulator.hpp"
#include "predict/target.hpp"
#include "program/breakdown.hpp"
#include "program/step_summary.hpp"
#include "workload/transformer.hpp"

namespace commscale::predict {

inline constexpr int kPredictionSchemaVersion = 1;

struct PredictOptions {
  MemoryOptions memory;
  bool reduce = true;         // simulate one rank per symmetry class
  bool keep_program = false;  // keep the program and simulation (for --timeline and --trace)
};

// One group name's communication: its slowest instance's links and the step's time on it.
struct GroupReport {
  std::string name;  // "tp", "dp", "pp", "embedding"
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
  Seconds host_issue;
  Seconds host_wait;
  // Interference (interference.hpp): where its figures came from ("" without), the time it added to
  // compute and to communication (mean per rank), and how many re-simulations it took.
  std::string interference_source;
  Seconds interference_compute;
  Seconds interference_comm;
  int interference_iterations = 0;
  std::vector<std::string> notes;
  int simulated_ranks = 0;
  std::size_t simulated_ops = 0;
  // With keep_program:
  std::optional<ProgramSet> program;
  std::optional<Simulation> simulation;
};

[[nodiscard]] Prediction predict_plan(const TransformerConfig& model, const ParallelPlan& plan, const Target& target,
                                      const PredictOptions& options = {});

}  // namespace commscale::predict

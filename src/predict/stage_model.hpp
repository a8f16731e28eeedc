#pragma once

// The fast path of `search` and `compare`: a plan's step estimated in about a millisecond, where
// building and simulating its real step program takes tens to hundreds (GPT-3 175B: 15,000 ops per
// rank and stage).
//
// What makes it fast, and what it gives up:
//  - A unit (the embedding, a layer, the head) is costed once per plan shape by simulating its ops as
//    a one-rank program, with the host and interference, as predict runs them (stage_costs.hpp,
//    unit_cost): every layer of a stage is the same, and each unit ends with both streams idle, so a
//    chunk's forward or backward is the sum of its units.
//  - The step is then simulated, by the same simulator as `predict` (simulator.hpp), as the program
//    builder's coarse program (parallel/program_builder.hpp, build_coarse_program): one rank per
//    stage, the same schedule, transfers, gradient buckets, ZeRO gathers and end of step, one op per
//    chunk, or per unit where the data-parallel stream needs it (the buckets of the last microbatch,
//    ZeRO-2 and -3); its durations are stage_costs.hpp's.
//  - A coarse program is built once per shape and kept with the simulator's index of it and its
//    classes of alike ops (stage_costs.hpp, CostClasses): the plans that share it (recompute,
//    micro-batch size, whose transfers resize_transfers sets) only recompute durations and simulate,
//    into storage kept from run to run (simulator.hpp, SimStorage), replaying the order of work the
//    simulator recorded on the program's first run (SimRecording), interference's re-simulations too.
//  - With more than 2p microbatches (p stages), the step is simulated at p and 2p microbatches and
//    extended linearly: past the pipeline's fill, each microbatch adds one period of the steady state
//    (exact for these schedules, whose durations are fixed: tested at 8p against simulating all).
//  - The breakdown is taken from the simulation's own data-start times with the breakdown's
//    interval arithmetic (program/breakdown.hpp, merge_sorted), without matching calls again.
//  - Gradient buckets close at unit boundaries rather than at the weight-gradient op that fills them,
//    and every stage's groups take the slowest links of their kind: small differences, measured by
//    tests/unit/predict_stage_model_test.cpp against the full simulation over a grid of plans (the
//    largest difference is stated there).
// A search does not estimate every plan: step_lower_bound gives, from the unit costs alone, a step no simulation
// can beat (the busiest stage's compute stream), and search.hpp leaves out the plans whose bound is above the
// plans it lists.
// Memory is the plan's own memory model (parallel/plan_memory.hpp), exactly.
// A model with experts is not simulated coarse (the coarse program's units are dense layers, its groups
// have no expert-parallel ones): each of its plans is predicted in full, as `predict` runs it (prediction.hpp),
// tens of milliseconds a plan.

#include <array>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "parallel/plan.hpp"
#include "parallel/plan_memory.hpp"
#include "predict/group_links.hpp"
#include "predict/simulator.hpp"
#include "predict/stage_costs.hpp"
#include "predict/target.hpp"
#include "program/breakdown.hpp"
#include "workload/transformer.hpp"

namespace commscale::predict {

struct PlanEstimate {
  ParallelPlan plan;
  bool fits = false;
  Bytes memory;  // the fullest rank
  std::string fit_message;
  bool estimated = false;  // the step was estimated (estimate() always does; memory_only() does not)
  Seconds step_time;
  Seconds compute;
  Seconds exposed_comm;
  Seconds bubble;
  Seconds host_wait;                        // of the bubble: the GPU ready but for the host
  std::map<std::string, GroupTime> groups;  // mean per rank, as the breakdown's
  double tokens_per_s = 0.0;
  double mfu = 0.0;
  double hfu = 0.0;
};

// The step of a coarse simulation: what PlanEstimate reports, before extrapolation.
struct CoarseFigures {
  double step = 0.0;
  double compute = 0.0;
  double exposed = 0.0;
  double gemm_flops = 0.0;  // one rank per stage, summed over stages
  double host_wait = 0.0;   // the GPU waiting for the host, mean per rank (part of the bubble)
  std::map<std::string, GroupTime> groups;
};

class PlanEvaluator {
 public:
  // Plans for `gpus` ranks (default: all of the target's), on the target's first GPUs.
  PlanEvaluator(const TransformerConfig& model, const Target& target, MemoryOptions memory, int gpus = 0);

  // Memory and fit only (cheap): the first filter of a search.
  [[nodiscard]] PlanEstimate memory_only(const ParallelPlan& plan) const;
  // Memory and the estimated step. The plan must be valid for the model (validate_plan).
  [[nodiscard]] PlanEstimate estimate(const ParallelPlan& plan);
  // A lower bound on the step `estimate` gives the plan, without simulating it: its busiest stage's compute
  // stream alone, every microbatch's units forward and backward (stage_units) at their unit costs, GEMMs at the
  // clock's largest speedup. The simulation only adds to it (the stream runs one op at a time, its other ops,
  // the host, interference and waits for other stages all lengthen the step). A plan predicted in full (experts,
  // context parallelism) has no unit costs: its units' compute ops at the cost model's times instead.
  [[nodiscard]] Seconds step_lower_bound(const ParallelPlan& plan);
  // The coarse simulation of exactly this plan (no extrapolation): for tests.
  [[nodiscard]] CoarseFigures simulate_coarse(const ParallelPlan& plan);

  // An evaluator of the same model, target and memory options with caches of its own, for another thread.
  [[nodiscard]] std::unique_ptr<PlanEvaluator> sibling() const {
    return std::make_unique<PlanEvaluator>(model_, target_, memory_, gpus_);
  }

  [[nodiscard]] const TransformerConfig& model() const noexcept { return model_; }
  [[nodiscard]] const Target& target() const noexcept { return target_; }
  [[nodiscard]] int gpus() const noexcept { return gpus_; }

 private:
  [[nodiscard]] const LayoutLinks& layout_links(const ParallelPlan& plan);
  [[nodiscard]] const UnitCosts& unit_costs(const ParallelPlan& plan, const GroupLinks& tp);
  [[nodiscard]] CoarseFigures coarse_breakdown(const ProgramSet& set, const std::vector<ProgramIndex>& indexes,
                                               const Simulation& sim);
  // A coarse program and the simulator's indexes of it, kept for the plans of one shape.
  struct Prepared {
    CoarseProgram coarse;
    std::vector<ProgramIndex> indexes;
    CostClasses classes;
    Bytes transfers;  // its pipeline transfers' size (pipeline_transfer_bytes of the plan it is for now)
    // How the simulator ran it (simulator.hpp): recorded by its first simulation, replayed by the rest.
    std::unique_ptr<SimRecording> recording = std::make_unique<SimRecording>();
  };
  [[nodiscard]] std::shared_ptr<const Prepared> coarse_program(const ParallelPlan& plan);

  // Storage reused from plan to plan.
  struct Scratch {
    std::array<std::vector<Interval>, kStreamCount> by_stream;
    std::array<std::vector<Interval>, 2 * kGroupRoleCount> by_group;  // [2 handle + (receive stream)]
    std::vector<Interval> compute, all, both, merged, offload;
  };
  Scratch scratch_;

  TransformerConfig model_;
  const Target& target_;
  MemoryOptions memory_;
  int gpus_;
  LinkAnalyzer analyzer_;
  FlopsPerSecond peak_;
  std::map<std::tuple<int, int, int, std::string, bool>, LayoutLinks> layouts_;
  // Unit costs by the lists' key and the tp group's links (bus bandwidth, latency inside and across nodes).
  struct UnitKey {
    LayerSharding sharding;
    double bus_bw = 0.0, intra_latency = 0.0, inter_latency = 0.0;
    friend auto operator<=>(const UnitKey&, const UnitKey&) = default;
  };
  std::map<UnitKey, UnitCosts> units_;
  // For plans predicted in full: a step's compute seconds of an embedding, a dense layer, an MoE layer and a head
  // (step_lower_bound), by the lists' key.
  std::map<LayerSharding, std::array<double, 4>> list_compute_;
  // The coarse programs of the latest plans, by what shapes them (program_builder.hpp, coarse_shape): the
  // plans a search enumerates one after another differ in recompute, schedule and micro-batch size;
  // recompute changes only the durations, the micro-batch size only the transfers' bytes
  // (resize_transfers), at a given number of microbatches per step.
  std::vector<std::pair<CoarseShape, std::shared_ptr<Prepared>>> programs_;
  Simulation sim_;  // the latest coarse simulation; its storage, and the simulator's, are reused
  SimStorage sim_storage_;
  std::size_t next_program_ = 0;  // the entry replaced next
};

}  // namespace commscale::predict

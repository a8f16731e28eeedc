#pragma once

// What `commscale plan` reports about a plan: FLOPs per step, memory per rank with the fit verdict,
// and the bytes each rank moves per step on each of its groups, taken from the built step program.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parallel/plan.hpp"
#include "parallel/plan_memory.hpp"
#include "program/op.hpp"
#include "workload/transformer.hpp"

namespace commscale {

// Per step, on one rank of a stage: the ops of one kind on one group.
struct GroupTraffic {
  std::string group;  // "tp", "dp", "pp-fwd", "pp-bwd", "embedding"
  std::string kind;   // "all_reduce", "all_gather", "reduce_scatter", "send", "recv"
  std::uint64_t count = 0;
  Bytes bytes;  // summed op sizes (op.hpp: nccl-tests sizes for collectives)
};

struct StageSummary {
  int stage = 0;
  std::size_t ops = 0;
  Flops gemm_flops;  // per rank per step, recompute included
  std::vector<GroupTraffic> traffic;
};

struct PlanSummary {
  TransformerConfig model;
  ParallelPlan plan;
  std::uint64_t parameters = 0;
  int microbatches = 0;
  Flops model_flops_per_step;     // Megatron-LM's formula for the global batch: the MFU basis
  Flops hardware_flops_per_step;  // every rank's GEMMs summed: recompute included (the HFU basis)
  std::vector<StageMemory> memory;
  std::optional<FitVerdict> fit;  // when a GPU memory size was given
  std::vector<StageSummary> stages;
  std::vector<std::string> program_problems;  // from the deadlock checker; empty when proven
};

[[nodiscard]] std::vector<GroupTraffic> stage_traffic(const ProgramSet& set, int rank);

[[nodiscard]] PlanSummary summarize_plan(const TransformerConfig& m, const ParallelPlan& p, const ProgramSet& set,
                                         const MemoryOptions& memory, std::optional<Bytes> gpu_memory);

// The --json document: schema_version, model, plan, model_flops_per_step, memory per rank in bytes, ...
[[nodiscard]] nlohmann::json summary_to_json(const PlanSummary& s);
// Its inverse, for `commscale report`: summary_to_json(summary_from_json(doc)) is doc without the
// command line and context `plan` adds. What to_json derives (world_size, max_memory_per_rank_bytes,
// program_deadlock_free; fit.worst_total) is not read into the struct: the first two must be present
// and agree with the plan and the memory, the third must agree when present. Errors name file and key.
[[nodiscard]] PlanSummary summary_from_json(const JsonAt& in);

}  // namespace commscale

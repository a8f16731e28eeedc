#pragma once

// Memory per rank under a plan, per pipeline stage (every rank of a stage holds the same), and the
// check against a GPU's memory.
//
// Assumptions, stated: model states per ZeRO stage and activations per layer as in
// workload/memory.hpp; activations of the microbatches in flight at the schedule's peak (computed
// from the schedule itself: p on the first 1F1B stage, all m with GPipe, p (1 + (p-1)/(p v)) interleaved);
// the logits' fp32 softmax on the last stage for each microbatch in flight there; with ZeRO-3, two
// gathered layers (the one running and the one prefetched); a fixed workspace allowance for the CUDA
// context, cuBLAS and NCCL buffers and allocator fragmentation. Embedding-output and loss scalars,
// and transient buffers (all-gather outputs, gradients being computed) are left to the workspace.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/units.hpp"
#include "parallel/plan.hpp"
#include "workload/transformer.hpp"

namespace commscale {

struct MemoryOptions {
  Bytes workspace = Bytes(2 * kGiB);
};

struct MemoryBreakdown {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;
  Bytes activations;
  Bytes logits;
  Bytes communication;
  Bytes workspace;
  [[nodiscard]] Bytes total() const noexcept {
    return weights + gradients + optimizer + activations + logits + communication + workspace;
  }
};

struct StageMemory {
  int stage = 0;
  std::uint64_t parameters = 0;  // held by one rank of the stage after tensor and pipeline sharding
  int layers = 0;                // transformer layers on the stage (all chunks)
  double layers_in_flight = 0;   // layer-microbatches of activations held at the peak
  MemoryBreakdown bytes;
};

// Parameters one rank of `stage` holds (all its chunks), before ZeRO sharding.
[[nodiscard]] std::uint64_t stage_parameters(const TransformerConfig& m, const ParallelPlan& p, int stage);

[[nodiscard]] std::vector<StageMemory> memory_per_stage(const TransformerConfig& m, const ParallelPlan& p,
                                                        const MemoryOptions& options);

struct FitVerdict {
  bool fits = true;
  Bytes capacity;
  int worst_stage = 0;
  Bytes worst_total;
  Bytes over;           // how much the worst stage exceeds the capacity (0 when it fits)
  std::string message;  // one or two sentences for people: what does not fit, by how much, what to try
};

// `capacity` is the GPU's memory in bytes. Where a GPU catalog exists, its caller looks the capacity
// up by name; this function only compares.
[[nodiscard]] FitVerdict check_fit(const std::vector<StageMemory>& stages, Bytes capacity);

// The most any stage holds (0 with no stages): the memory a rank of the plan needs.
[[nodiscard]] Bytes largest_total(const std::vector<StageMemory>& stages);

[[nodiscard]] nlohmann::json memory_to_json(const StageMemory& s);
// The inverse of memory_to_json, for `commscale report`; total_bytes is the parts' sum, not read.
[[nodiscard]] StageMemory memory_from_json(const JsonAt& in);

}  // namespace commscale

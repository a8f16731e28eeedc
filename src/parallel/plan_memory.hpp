#pragma once

// Memory per rank under a plan, per pipeline stage (every rank of a stage holds the same), and the
// check against a GPU's memory.
//
// Assumptions, stated: model states per ZeRO stage and activations per layer as in
// workload/memory.hpp, the gradients in the type the framework keeps them (gradient_storage); activations of the microbatches in flight at the schedule's peak (computed
// from the schedule itself: p on the first 1F1B stage, all m with GPipe, p (1 + (p-1)/(p v)) interleaved);
// the logits' fp32 softmax on the last stage for each microbatch in flight there; with ZeRO-3, two
// gathered layers (the one running and the one prefetched); a fixed workspace allowance for the CUDA
// context, cuBLAS and NCCL buffers and allocator fragmentation. Embedding-output and loss scalars,
// and transient buffers (all-gather outputs, gradients being computed) are left to the workspace.
//
// LoRA (workload/lora.hpp): the frozen base's weights (16-bit, or QLoRA's NF4 for the blocks' linear layers)
// and the adapters' 16-bit weights; gradients and optimizer state for the adapters only, per ZeRO stage;
// each adapter's x A (T x r) kept for the backward beside the layer's activations.
//
// Offload (plan.hpp) moves states to the host's memory, counted per rank in StageMemory::host:
//  - optimizer (ZeRO-Offload, Ren et al. 2021, arXiv 2101.06840; DeepSpeed's stage_1_and_2.py): the rank's
//    optimizer state partition, and its gradient partition in fp32 for the CPU update (4 bytes a parameter).
//    With ZeRO-2 or 3 the GPU keeps only the gradient buckets being reduced and copied out (two buckets,
//    at most the gradients); with ZeRO-1 the full 16-bit gradients it accumulates into.
//  - parameters (ZeRO-Infinity, arXiv 2104.07857): ZeRO-3's 16-bit shard on the host; the GPU holds the
//    two gathered layers ZeRO-3 already counts as communication.
//  - activations: the GPU keeps the layer running and the one being copied (two layer-microbatches, at most
//    what is in flight); the host keeps the rest.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/units.hpp"
#include "parallel/plan.hpp"
#include "workload/memory.hpp"
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

// A rank's share of its node's host memory, with offload (zero without).
struct HostMemory {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;
  Bytes activations;
  [[nodiscard]] Bytes total() const noexcept { return weights + gradients + optimizer + activations; }
};

struct StageMemory {
  int stage = 0;
  std::uint64_t parameters = 0;  // held by one rank of the stage after tensor and pipeline sharding
  std::uint64_t trainable = 0;   // of which train: all of them, or with LoRA the adapters'
  int layers = 0;                // transformer layers on the stage (all chunks)
  double layers_in_flight = 0;   // layer-microbatches of activations held at the peak
  MemoryBreakdown bytes;
  HostMemory host;
};

// Parameters one rank of `stage` holds (all its chunks), before ZeRO sharding; with LoRA the adapters too.
[[nodiscard]] std::uint64_t stage_parameters(const TransformerConfig& m, const ParallelPlan& p, int stage);
// The stage's linear weights TransformerEngine keeps FP8 copies of, and casts once a step (workload/fp8_ops.hpp,
// fp8_linear_parameters, every chunk's layers); 0 without --fp8.
[[nodiscard]] std::uint64_t stage_fp8_linear_parameters(const TransformerConfig& m, const ParallelPlan& p, int stage);
// Of those, the ones that train (gradients, optimizer state): all of them, or with LoRA the adapters'.
[[nodiscard]] std::uint64_t trainable_stage_parameters(const TransformerConfig& m, const ParallelPlan& p, int stage);
// Of those, the routed experts' (an MoE model's; 0 for a dense one): reduced and sharded over expert_dp(p).
[[nodiscard]] std::uint64_t stage_expert_parameters(const TransformerConfig& m, const ParallelPlan& p, int stage);
// How the plan's framework keeps the gradients (workload/memory.hpp): Megatron-LM's Adam keeps an fp32
// main_grad buffer in bf16 and an fp32 copy in the optimizer in fp16; every other case, the model's type.
[[nodiscard]] GradientStorage gradient_storage(const TransformerConfig& m, const ParallelPlan& p);

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

// Host memory of a node against its capacity: `ranks_per_node` ranks each holding as much as the fullest
// stage's (an upper bound where a node mixes stages). Fits when no rank offloads anything.
[[nodiscard]] FitVerdict check_host_fit(const std::vector<StageMemory>& stages, int ranks_per_node, Bytes capacity);

// The most any stage holds on the host per rank (0 without offload).
[[nodiscard]] Bytes largest_host_total(const std::vector<StageMemory>& stages);

// The most any stage holds (0 with no stages): the memory a rank of the plan needs.
[[nodiscard]] Bytes largest_total(const std::vector<StageMemory>& stages);

[[nodiscard]] nlohmann::json memory_to_json(const StageMemory& s);
// The inverse of memory_to_json, for `commscale report`; total_bytes is the parts' sum, not read.
[[nodiscard]] StageMemory memory_from_json(const JsonAt& in);

}  // namespace commscale

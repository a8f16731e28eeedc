#pragma once

// A parallel plan: data x tensor x pipeline parallel sizes and how a step runs on them.

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/json_at.hpp"
#include "core/plan_terms.hpp"
#include "core/units.hpp"
#include "parallel/framework.hpp"
#include "workload/op_list.hpp"
#include "workload/transformer.hpp"

namespace commscale {

struct ParallelPlan {
  int dp = 1;
  int tp = 1;
  int pp = 1;
  bool sequence_parallel = false;
  int zero_stage = 0;
  Recompute recompute = Recompute::kNone;
  Optimizer optimizer = Optimizer::kAdam;
  bool flash_attention = false;
  KernelSet kernels = KernelSet::kFused;
  int micro_batch = 1;
  int global_batch = 1;  // sequences per step over all data-parallel replicas
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int chunks = 1;                         // v, model chunks per pipeline stage (interleaved only)
  std::string order = "tp-dp-pp";         // rank layout, fastest-varying dimension first
  Bytes bucket_bytes = Bytes(25 * kMiB);  // data-parallel gradient bucket (PyTorch DDP's default)
  // Data-parallel gradients reduced in buckets as the last microbatch's backward makes them (PyTorch DDP,
  // Megatron-LM's --overlap-grad-reduce); false: in one reduction after the backward (Megatron-LM's default).
  bool overlap_grad_reduce = true;
  Framework framework = Framework::kCommscale;  // who runs the step (framework.hpp); the defaults it set
  // Megatron-LM's weight-gradient GEMMs accumulate into the main gradients (--gradient-accumulation-fusion, on
  // by default since 2022-02); false (--no-gradient-accumulation-fusion, and Megatron-LM before it): an add
  // per microbatch (workload/op_list.hpp, GradAccumulation). Read with framework megatron-lm only.
  bool gradient_accumulation_fusion = true;
  // Transformer layers of the first and last pipeline stages, 0: as many as every other stage (Megatron-LM's
  // --decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers); the stages between share the
  // rest evenly. Only without interleaving.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  // ZeRO-Offload (Ren et al. 2021, arXiv 2101.06840): the optimizer state and fp32 gradient partition in host
  // memory, gradients copied device to host after the backward, the update run by the CPU (DeepSpeed's
  // CPU Adam), the new 16-bit weights copied back. ZeRO stage 1 or more, as DeepSpeed requires.
  OffloadDevice offload_optimizer = OffloadDevice::kNone;
  // ZeRO-Infinity's parameter offload (Rajbhandari et al. 2021, arXiv 2104.07857): ZeRO-3's 16-bit parameter
  // shards in host memory, copied to the GPU before each layer's all-gather in forward and backward.
  OffloadDevice offload_params = OffloadDevice::kNone;
  // Activation offload (DeepSpeed's cpu_checkpointing, PyTorch's save_on_cpu): what a layer keeps for its
  // backward goes to host memory after its forward and comes back before its backward.
  bool offload_activations = false;
  // LoRA / QLoRA fine-tuning (core/plan_terms.hpp): the base frozen, only the adapters train (their
  // gradients reduced, their optimizer state kept). With tp 1 and ZeRO 0-2 (validate_plan).
  LoraSpec lora;
  // Expert parallelism (Megatron-Core's --expert-model-parallel-size), for a model with experts: each MoE
  // layer's routed experts split over `ep` ranks, folded onto the tp x cp x dp ranks of a stage (rank_layout.hpp,
  // ExpertLayout); etp x ep divides tp x cp x dp, ep divides the experts.
  int ep = 1;
  // Expert tensor parallelism (Megatron-Core's --expert-tensor-parallel-size; MOE.md): each routed expert's fc1
  // split by columns and fc2 by rows over `etp` ranks, the dispatched rows all-gathered over them before the
  // experts and reduce-scattered after. 1 by default (Megatron-Core's default is tp).
  int etp = 1;
  // FP8 linear layers (core/plan_terms.hpp, Fp8Recipe; src/predict/FP8.md): on GPUs with FP8 tensor cores.
  Fp8Recipe fp8 = Fp8Recipe::kNone;
  // With fp8 and experts: the MoE dispatch all-to-all's forward rows in FP8, 1 byte an element plus a 4-byte
  // scale per 128 (Megatron-Core's --moe-dispatch-fwd-dtype mxfp8; src/predict/FP8.md).
  bool fp8_dispatch = false;
  // Context parallelism (Megatron-Core's --context-parallel-size and --cp-comm-type, CONTEXT_PARALLEL.md): each
  // sequence split over `cp` ranks, attention exchanging keys and values over them; weights replicated, their
  // gradients reduced over dp x cp (routed experts' over edp, which folds cp in: expert_dp). world = tp x cp x dp
  // x pp, cp laid out after tp (rank_layout.hpp).
  int cp = 1;
  CpCommType cp_comm = CpCommType::kP2p;
};

// Bounds on plans (validate_plan): far above any real job, low enough for rank arithmetic in an int.
inline constexpr int kMaxRanks = 1 << 20;
inline constexpr int kMaxMicroBatch = 1 << 16;
inline constexpr std::int64_t kMaxLayerPasses = 1 << 18;  // microbatches per step x layers per stage

// Valid only for a plan that passed validate_plan (or checked_world_size).
[[nodiscard]] inline int world_size(const ParallelPlan& p) noexcept { return p.dp * p.tp * p.pp * p.cp; }
// dp * tp * pp * cp, each at least 1 and the product at most kMaxRanks; throws InputError naming the flag.
[[nodiscard]] int checked_world_size(int dp, int tp, int pp, int cp = 1);
// The ranks that hold the same weights and reduce their gradients (and share ZeRO's shards): dp x cp,
// Megatron-Core's data-parallel group with context parallelism. Valid for a plan that passed validate_plan.
[[nodiscard]] inline int grad_ranks(const ParallelPlan& p) noexcept { return p.dp * p.cp; }
// The ranks that hold the same expert shards: tp x cp x dp / (etp x ep) (Megatron-Core's expert data parallel
// size, which folds context parallelism in). Valid for a plan that passed validate_plan.
[[nodiscard]] inline int expert_dp(const ParallelPlan& p) noexcept { return p.tp * p.cp * p.dp / (p.etp * p.ep); }
// m = global batch / (dp * micro-batch).
[[nodiscard]] inline int microbatches_per_step(const ParallelPlan& p) noexcept {
  return p.global_batch / (p.dp * p.micro_batch);
}
[[nodiscard]] inline int layers_per_chunk(const TransformerConfig& m, const ParallelPlan& p) noexcept {
  return m.layers / (p.pp * p.chunks);
}
// Whether the plan gives an end stage its own layer count (a negative one is refused by validate_plan).
[[nodiscard]] inline bool uneven_stages(const ParallelPlan& p) noexcept {
  return p.first_stage_layers != 0 || p.last_stage_layers != 0;
}
// The layers of one virtual stage (chunk x pp + stage): the first layer and how many, with uneven first and
// last stages where the plan has them. Valid for a plan that passed validate_plan.
struct LayerRange {
  int first = 0;
  int count = 0;
};
[[nodiscard]] LayerRange virtual_stage_layers(const TransformerConfig& m, const ParallelPlan& p, int virtual_stage);
// Layers of a pipeline stage over all its chunks, and the most any stage holds.
[[nodiscard]] int stage_layers(const TransformerConfig& m, const ParallelPlan& p, int stage);
[[nodiscard]] int most_stage_layers(const TransformerConfig& m, const ParallelPlan& p);
// " with stages of 7, 8 (x14) and 7 layers" for uneven stages, else "".
[[nodiscard]] std::string stage_split_text(const TransformerConfig& m, const ParallelPlan& p);
// The plan's memory-saving options for the reports (MEMORY_SAVING.md), "" where it uses none:
// "optimizer adam8bit; LoRA r 8 on qv, NF4 base; offload: optimizer, parameters, activations to the host".
[[nodiscard]] std::string memory_saving_text(const ParallelPlan& p);
// Context parallelism for the reports, "" without it: "cp 2 (p2p): 16384 of 32768 tokens per rank".
[[nodiscard]] std::string context_parallel_text(const TransformerConfig& m, const ParallelPlan& p);
// A model's experts and how the plan splits them, for the reports (MOE.md), "" for a dense model:
// "8 experts of F 14336 in 32 of 32 layers, top 2, dropless; 46.7 B parameters, 12.9 B active; ep 8: 1 expert
// per rank, expert data parallel 1".
[[nodiscard]] std::string experts_plan_text(const TransformerConfig& m, const ParallelPlan& p);
[[nodiscard]] LayerSharding layer_sharding(const ParallelPlan& p) noexcept;

// Expert tensor parallelism's limits whatever the layout (MOE.md): a model with experts whose F it divides, no
// linear biases, no FP8. A search checks the --etp sizes it is asked for against them before it enumerates.
void validate_expert_tensor_parallel(const TransformerConfig& m, int etp, Fp8Recipe fp8);

// What context parallelism is not modelled with, whatever the sequence (CONTEXT_PARALLEL.md): no fused attention,
// eager kernels, LoRA, offload. A search checks the --cp sizes it is asked for against them before it enumerates.
void validate_context_options(const ParallelPlan& p);

// Checks the plan against the model and the world size. Throws InputError naming the flag of the
// offending value (--tp, --pp, --dp, --cp, --global-batch, ...) and what would be accepted.
void validate_plan(const TransformerConfig& m, const ParallelPlan& p, int world);
// The part of it search and compare check once for all their plans: --fp8-dispatch needs --fp8 and experts.
void validate_fp8_dispatch(const TransformerConfig& m, Fp8Recipe fp8, bool fp8_dispatch);

// A model and a plan that passed validate_plan together: made once where a plan enters (the flags,
// a search's enumeration), then taken by the program builder and both engines, which do not check
// it again.
class CheckedPlan {
 public:
  // Throws InputError naming the flag of the offending value (validate_plan).
  CheckedPlan(TransformerConfig model, ParallelPlan plan, int world);
  // For the plan's own world size (checked_world_size).
  CheckedPlan(TransformerConfig model, ParallelPlan plan);

  [[nodiscard]] const TransformerConfig& model() const noexcept { return model_; }
  [[nodiscard]] const ParallelPlan& plan() const noexcept { return plan_; }
  [[nodiscard]] int world() const noexcept { return world_size(plan_); }

 private:
  TransformerConfig model_;
  ParallelPlan plan_;
};

[[nodiscard]] nlohmann::json plan_to_json(const ParallelPlan& p);
// The inverse of plan_to_json, for `commscale report`: every key optional (absent or null: the
// struct's default), each one checked when present (dp, tp, pp, micro_batch, global_batch and chunks
// whole numbers of 1 or more; names as plan_to_json writes them). Errors name the file and key.
// microbatches_per_step is derived, not read.
[[nodiscard]] ParallelPlan plan_from_json(const JsonAt& in);

}  // namespace commscale

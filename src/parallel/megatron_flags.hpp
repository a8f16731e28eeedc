#pragma once

// Megatron-LM's flag names, so that a line of a Megatron-LM launch script can be pasted. Plain aliases
// (--tensor-model-parallel-size for --tp, --num-layers for --layers, ...) are second names of commscale's
// flags (cli/model_options.cpp); this file converts the flags that are not (layers per virtual stage into
// chunks, the distributed optimizer into ZeRO 1, ...) and lists the Megatron-LM flags commscale does not
// model, which the command line refuses by name (exit 2) rather than ignoring them.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "parallel/plan.hpp"
#include "workload/model_spec.hpp"

namespace commscale {

// The Megatron-LM flags as typed: a switch is true where given, a value set where given.
struct MegatronFlags {
  std::optional<int> layers_per_virtual_stage;  // --num-layers-per-virtual-pipeline-stage
  std::optional<std::string> recompute_granularity;
  bool recompute_activations = false;
  std::optional<std::string> recompute_method;
  std::optional<int> recompute_num_layers;  // 0 reads as left out
  bool distributed_optimizer = false;       // --use-distributed-optimizer
  bool overlap_grad_reduce = false;
  bool no_gradient_accumulation_fusion = false;
  bool group_query_attention = false;
  bool multi_latent_attention = false;
  bool swiglu = false;
  std::optional<std::string> normalization;
  std::optional<std::string> position_embedding;  // --position-embedding-type
  bool disable_bias_linear = false;
  bool untie_embeddings = false;  // --untie-embeddings-and-output-weights
  bool bf16 = false;
  bool fp16 = false;
  std::optional<std::int64_t> max_position_embeddings;
  std::optional<std::string> fp8_format;  // --fp8-format: hybrid or e4m3 (FP8 on)
  std::optional<std::string> fp8_recipe;  // --fp8-recipe: delayed, tensorwise, blockwise or mxfp8
  std::optional<std::string> moe_dispatch_fwd_dtype;  // --moe-dispatch-fwd-dtype: bf16 or mxfp8 (--fp8-dispatch)
  std::optional<std::string> moe_token_dispatcher_type;  // alltoall, the dispatcher modelled (MOE.md)
  std::optional<std::string> moe_layer_freq;             // 1: every layer MoE (a pattern is not modelled)
};

// Megatron-LM flags refused by name: those that change the step in ways commscale does not model (with a
// value, and switches), and those of a launch line that do not change a step's time or memory.
struct RejectedMegatronFlags {
  std::span<const std::string_view> unmodelled_with_value;
  std::span<const std::string_view> unmodelled_switches;
  std::span<const std::string_view> training_with_value;
};
[[nodiscard]] RejectedMegatronFlags rejected_megatron_flags() noexcept;
inline constexpr std::string_view kMegatronChangesStep = "it changes the step in ways commscale's model leaves out";
inline constexpr std::string_view kMegatronNoEffect =
    "it does not change a step's time or memory (drop it from the pasted line)";

// The commscale flags of the same request that the Megatron-LM flags are checked against: whether each
// was given on the command line (a plan file's value is replaced, not refused).
struct MegatronPeers {
  bool kv_heads = false;  // --kv-heads / --num-query-groups
  bool recompute = false;
  bool zero = false;
  bool chunks = false;
  bool schedule = false;
  bool fp8 = false;
  bool fp8_dispatch = false;  // --fp8-dispatch, or a plan file's fp8_dispatch
};

// Model overrides from the Megatron-LM flags given. Throws InputError naming the flag.
void apply_megatron_model_flags(const MegatronFlags& flags, const MegatronPeers& peers, ModelOverrides& overrides);
// Checks the resolved model against --max-position-embeddings.
void check_megatron_model(const MegatronFlags& flags, const TransformerConfig& model);
// The plan's recompute, ZeRO stage, chunks, schedule and FP8 recipe from the Megatron-LM flags given, checked against
// the commscale flags that say the same. Throws InputError naming the flag.
void apply_megatron_plan_flags(const MegatronFlags& flags, const MegatronPeers& peers, const TransformerConfig& model,
                               ParallelPlan& plan);

// The Megatron-LM model flags given, as text to paste into another command (" --swiglu ...").
[[nodiscard]] std::string megatron_model_flags_text(const MegatronFlags& flags);

}  // namespace commscale

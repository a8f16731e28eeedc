#include "cli/megatron_flags.hpp"

#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

const std::string kGroup = "Megatron-LM flags (converted)";

void add_rejected(CLI::App& cmd, std::string_view flag, bool takes_value, std::string_view why) {
  const std::string name(flag);
  const std::string message = fmt::format("is a Megatron-LM flag that commscale does not model: {}", why);
  auto reject = [name, message] { throw InputError(name, message, "the line without it"); };
  if (takes_value) {
    cmd.add_option_function<std::string>(name, [reject](const std::string&) { reject(); })->group("");
  } else {
    cmd.add_flag_function(name, [reject](std::int64_t) { reject(); })->group("");
  }
}

}  // namespace

bool option_given(const CLI::App* command, const std::string& name) {
  if (command == nullptr) return false;
  const CLI::Option* option = command->get_option_no_throw(name);
  return option != nullptr && option->count() > 0;
}

void add_megatron_model_flags(CLI::App& cmd, MegatronArguments* a) {
  cmd.add_flag("--swiglu", a->swiglu, "Megatron-LM: SwiGLU MLP (as --activation swiglu)")->group(kGroup);
  cmd.add_flag("--group-query-attention", a->group_query_attention,
               "Megatron-LM: grouped-query attention, with --num-query-groups")
      ->group(kGroup);
  cmd.add_flag("--multi-latent-attention", a->multi_latent_attention,
               "Megatron-LM: multi-head latent attention, its sizes from --kv-lora-rank, --q-lora-rank, --qk-head-dim, "
               "--qk-pos-emb-head-dim and --v-head-dim or Megatron-LM's defaults (32, none, 128, 64, 128)")
      ->group(kGroup);
  cmd.add_option("--normalization", a->normalization, "Megatron-LM: LayerNorm or RMSNorm")->group(kGroup);
  cmd.add_option("--position-embedding-type", a->position_embedding, "Megatron-LM: learned_absolute or rope")
      ->group(kGroup);
  cmd.add_flag("--disable-bias-linear", a->disable_bias_linear, "Megatron-LM: no biases in linear layers")
      ->group(kGroup);
  cmd.add_flag("--untie-embeddings-and-output-weights", a->untie_embeddings, "Megatron-LM: untied output weights")
      ->group(kGroup);
  cmd.add_flag("--bf16", a->bf16, "Megatron-LM: train in bf16 (as --dtype bf16)")->group(kGroup);
  cmd.add_flag("--fp16", a->fp16, "Megatron-LM: train in fp16 (as --dtype fp16)")->group(kGroup);
  cmd.add_option("--max-position-embeddings", a->max_position_embeddings,
                 "Megatron-LM: checked to be at least the sequence length")
      ->group(kGroup);
  for (std::string_view f : rejected_megatron_flags().training_with_value)
    add_rejected(cmd, f, true, kMegatronNoEffect);
}

void add_megatron_plan_flags(CLI::App& cmd, MegatronArguments* a) {
  cmd.add_option("--num-layers-per-virtual-pipeline-stage", a->layers_per_virtual_stage,
                 "Megatron-LM: layers per model chunk (the interleaved schedule with layers / (pp x this) chunks)")
      ->group(kGroup);
  cmd.add_option("--recompute-granularity", a->recompute_granularity, "Megatron-LM: full or selective")->group(kGroup);
  cmd.add_flag("--recompute-activations", a->recompute_activations, "Megatron-LM: selective recompute")->group(kGroup);
  cmd.add_option("--recompute-method", a->recompute_method, "Megatron-LM: uniform (with --recompute-num-layers 1)")
      ->group(kGroup);
  cmd.add_option("--recompute-num-layers", a->recompute_num_layers, "Megatron-LM: 1 (every layer recomputed)")
      ->group(kGroup);
  cmd.add_flag("--use-distributed-optimizer", a->distributed_optimizer,
               "Megatron-LM: optimizer state sharded over data-parallel ranks (ZeRO 1)")
      ->group(kGroup);
  cmd.add_flag("--overlap-grad-reduce", a->overlap_grad_reduce,
               "Megatron-LM: data-parallel gradients reduced in buckets during the backward (as PyTorch DDP)")
      ->group(kGroup);
  cmd.add_flag("--no-gradient-accumulation-fusion", a->no_gradient_accumulation_fusion,
               "Megatron-LM: weight gradients added into the main gradients by a kernel per microbatch, not by the "
               "weight-gradient GEMM (as Megatron-LM did before 2022-02)")
      ->group(kGroup);
  cmd.add_flag("--moe-grouped-gemm", a->moe_grouped_gemm,
               "Megatron-LM: a rank's local experts as one grouped GEMM (TransformerEngine's GroupedLinear), as "
               "commscale always runs them")
      ->group(kGroup);
  cmd.add_option("--fp8-format", a->fp8_format,
                 "Megatron-LM: FP8 linear layers, hybrid (E4M3 forward, E5M2 gradients) or e4m3 (as --fp8)")
      ->group(kGroup);
  cmd.add_option("--fp8-recipe", a->fp8_recipe,
                 "Megatron-LM: with --fp8-format, delayed (default), tensorwise (as --fp8 current), blockwise or "
                 "mxfp8 (as --fp8 block)")
      ->group(kGroup);
  cmd.add_option("--moe-dispatch-fwd-dtype", a->moe_dispatch_fwd_dtype,
                 "Megatron-LM: the MoE dispatch all-to-all's type, bf16 or mxfp8 (as --fp8-dispatch)")
      ->group(kGroup);
  cmd.add_option("--moe-token-dispatcher-type", a->moe_token_dispatcher_type,
                 "Megatron-LM: alltoall, the MoE dispatcher commscale models (allgather and flex are refused)")
      ->group(kGroup);
  cmd.add_option("--moe-layer-freq", a->moe_layer_freq,
                 "Megatron-LM: 1, every layer MoE (--first-dense-layers for leading dense ones; a pattern is refused)")
      ->group(kGroup);
  const RejectedMegatronFlags rejected = rejected_megatron_flags();
  for (std::string_view f : rejected.unmodelled_with_value) add_rejected(cmd, f, true, kMegatronChangesStep);
  for (std::string_view f : rejected.unmodelled_switches) add_rejected(cmd, f, false, kMegatronChangesStep);
}

MegatronFlags megatron_flags(const MegatronArguments& a, const CLI::App* command) {
  const auto text = [](const std::string& value) {
    return value.empty() ? std::nullopt : std::optional<std::string>(value);
  };
  MegatronFlags f;
  if (option_given(command, "--num-layers-per-virtual-pipeline-stage")) {
    f.layers_per_virtual_stage = a.layers_per_virtual_stage;
  }
  f.recompute_granularity = text(a.recompute_granularity);
  f.recompute_activations = a.recompute_activations;
  f.recompute_method = text(a.recompute_method);
  if (option_given(command, "--recompute-num-layers")) f.recompute_num_layers = a.recompute_num_layers;
  f.distributed_optimizer = a.distributed_optimizer;
  f.overlap_grad_reduce = a.overlap_grad_reduce;
  f.no_gradient_accumulation_fusion = a.no_gradient_accumulation_fusion;
  f.group_query_attention = a.group_query_attention;
  f.multi_latent_attention = a.multi_latent_attention;
  f.swiglu = a.swiglu;
  f.normalization = text(a.normalization);
  f.position_embedding = text(a.position_embedding);
  f.disable_bias_linear = a.disable_bias_linear;
  f.untie_embeddings = a.untie_embeddings;
  f.bf16 = a.bf16;
  f.fp16 = a.fp16;
  if (option_given(command, "--max-position-embeddings")) f.max_position_embeddings = a.max_position_embeddings;
  if (option_given(command, "--fp8-format")) f.fp8_format = a.fp8_format;
  if (option_given(command, "--fp8-recipe")) f.fp8_recipe = a.fp8_recipe;
  f.moe_dispatch_fwd_dtype = text(a.moe_dispatch_fwd_dtype);
  f.moe_token_dispatcher_type = text(a.moe_token_dispatcher_type);
  f.moe_layer_freq = text(a.moe_layer_freq);
  return f;
}

}  // namespace commscale

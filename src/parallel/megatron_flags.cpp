#include "parallel/megatron_flags.hpp"

#include <array>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

// Megatron-LM flags that change what a step computes or sends in ways commscale does not model.
constexpr std::array<std::string_view, 8> kUnmodelledWithValue = {"--pipeline-model-parallel-layout",
                                                                  "--make-vocab-size-divisible-by",
                                                                  "--kv-channels",
                                                                  "--data-parallel-sharding-strategy",
                                                                  "--transformer-impl",
                                                                  "--attention-backend",
                                                                  "--ddp-bucket-size",
                                                                  "--tp-comm-overlap-cfg"};
constexpr std::array<std::string_view, 10> kUnmodelledFlags = {
    "--overlap-param-gather", "--tp-comm-overlap",       "--squared-relu",
    "--apply-layernorm-1p",   "--no-position-embedding", "--add-qkv-bias",
    "--qk-layernorm",         "--use-torch-fsdp2",       "--defer-embedding-wgrad-compute",
    "--moe-shared-expert-overlap"};
// Megatron-LM flags of a launch line that do not change a step's time or memory: the optimizer's
// hyperparameters, data, checkpoints, logging. Rejected too, so that nothing pasted is silently dropped.
constexpr std::array<std::string_view, 32> kTrainingWithValue = {"--lr",
                                                                 "--min-lr",
                                                                 "--lr-decay-style",
                                                                 "--lr-warmup-iters",
                                                                 "--lr-warmup-fraction",
                                                                 "--lr-decay-iters",
                                                                 "--train-iters",
                                                                 "--train-samples",
                                                                 "--data-path",
                                                                 "--split",
                                                                 "--save",
                                                                 "--load",
                                                                 "--save-interval",
                                                                 "--eval-interval",
                                                                 "--eval-iters",
                                                                 "--log-interval",
                                                                 "--tokenizer-type",
                                                                 "--tokenizer-model",
                                                                 "--vocab-file",
                                                                 "--merge-file",
                                                                 "--weight-decay",
                                                                 "--clip-grad",
                                                                 "--init-method-std",
                                                                 "--seed",
                                                                 "--attention-dropout",
                                                                 "--hidden-dropout",
                                                                 // MoE: the router's losses and scaling, and its
                                                                 // group limit, which sends the same rows (MOE.md)
                                                                 "--moe-aux-loss-coeff",
                                                                 "--moe-z-loss-coeff",
                                                                 "--moe-router-topk-scaling-factor",
                                                                 "--moe-router-num-groups",
                                                                 "--moe-router-group-topk",
                                                                 "--moe-router-load-balancing-type"};

}  // namespace

RejectedMegatronFlags rejected_megatron_flags() noexcept {
  return {kUnmodelledWithValue, kUnmodelledFlags, kTrainingWithValue};
}

void apply_megatron_model_flags(const MegatronFlags& a, const MegatronPeers& peers, ModelOverrides& o) {
  if (a.swiglu) {
    if (o.activation && *o.activation != MlpActivation::kSwiGlu) {
      throw InputError("--swiglu", "given with --activation gelu", "one of them");
    }
    o.activation = MlpActivation::kSwiGlu;
  }
  // Megatron-LM reads --num-query-groups only with --group-query-attention: a line with one alone is a
  // mistake there, and taken as one here.
  if (a.group_query_attention && !peers.kv_heads) {
    throw InputError("--group-query-attention", "given without --num-query-groups", "--num-query-groups N");
  }
  if (a.normalization) {
    if (*a.normalization != "LayerNorm" && *a.normalization != "RMSNorm") {
      throw InputError("--normalization", fmt::format("\"{}\"", *a.normalization), "LayerNorm or RMSNorm");
    }
    o.norm = *a.normalization == "LayerNorm" ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  }
  if (a.position_embedding) {
    if (*a.position_embedding != "learned_absolute" && *a.position_embedding != "rope") {
      throw InputError("--position-embedding-type", fmt::format("\"{}\"", *a.position_embedding),
                       "learned_absolute or rope");
    }
    o.positions = *a.position_embedding == "rope" ? PositionEmbedding::kRotary : PositionEmbedding::kLearned;
  }
  if (a.disable_bias_linear) o.linear_bias = false;
  if (a.multi_latent_attention) o.latent_attention = true;
  if (a.untie_embeddings) o.tied_embeddings = false;
  if (a.bf16 && a.fp16) throw InputError("--bf16", "given with --fp16", "one training type");
  if ((a.bf16 || a.fp16) && o.dtype)
    throw InputError(a.bf16 ? "--bf16" : "--fp16", "given with --dtype", "one of them");
  if (a.bf16) o.dtype = DataType::kBFloat16;
  if (a.fp16) o.dtype = DataType::kFloat16;
}

namespace {

Recompute megatron_recompute(const MegatronFlags& a) {
  const std::string granularity = a.recompute_granularity.value_or("");
  const std::string method = a.recompute_method.value_or("");
  const int layers = a.recompute_num_layers.value_or(0);
  if (a.recompute_activations) {
    if (!granularity.empty() && granularity != "selective") {
      throw InputError("--recompute-activations", fmt::format("given with --recompute-granularity {}", granularity),
                       "one of them (--recompute-activations is selective recompute)");
    }
    return Recompute::kSelective;
  }
  if (granularity == "selective") return Recompute::kSelective;
  if (granularity != "full") {
    throw InputError("--recompute-granularity", fmt::format("\"{}\"", granularity), "full or selective");
  }
  // commscale's full recompute checkpoints every layer: Megatron-LM's uniform method with one layer per chunk.
  if (method != "uniform" || layers != 1) {
    throw InputError("--recompute-method",
                     fmt::format("{} with --recompute-num-layers {}", method.empty() ? "missing" : method, layers),
                     "uniform with --recompute-num-layers 1 (every layer recomputed: the full recompute commscale "
                     "models)");
  }
  return Recompute::kFull;
}

// Megatron-LM's FP8: --fp8-format turns it on (hybrid: E4M3 forward, E5M2 gradients; e4m3: E4M3 throughout,
// the same rates and bytes, so read as hybrid), --fp8-recipe (default delayed) picks the scaling.
Fp8Recipe megatron_fp8(const MegatronFlags& a) {
  const std::string format = a.fp8_format.value_or("");
  if (format != "hybrid" && format != "e4m3") {
    throw InputError("--fp8-format", fmt::format("\"{}\"", format), "hybrid or e4m3");
  }
  const std::string recipe = a.fp8_recipe.value_or("delayed");
  if (recipe == "delayed") return Fp8Recipe::kDelayed;
  if (recipe == "tensorwise") return Fp8Recipe::kCurrent;
  if (recipe == "blockwise" || recipe == "mxfp8") return Fp8Recipe::kBlock;
  throw InputError("--fp8-recipe", fmt::format("\"{}\"", recipe), "delayed, tensorwise, blockwise or mxfp8");
}

}  // namespace

void apply_megatron_plan_flags(const MegatronFlags& a, const MegatronPeers& peers, const TransformerConfig& m,
                               ParallelPlan& p) {
  if (a.recompute_granularity || a.recompute_activations) {
    const Recompute r = megatron_recompute(a);
    if (peers.recompute && p.recompute != r) {
      throw InputError("--recompute", fmt::format("{} given with Megatron-LM's {}", name(p.recompute), name(r)),
                       "one of them");
    }
    p.recompute = r;
  } else if (a.recompute_method || a.recompute_num_layers.value_or(0) != 0) {
    throw InputError(!a.recompute_method ? "--recompute-num-layers" : "--recompute-method",
                     "given without --recompute-granularity full", "--recompute-granularity full with them");
  }
  if (a.distributed_optimizer) {
    if (peers.zero && p.zero_stage != 1) {
      throw InputError("--use-distributed-optimizer", fmt::format("given with --zero {}", p.zero_stage),
                       "one of them (the distributed optimizer is ZeRO 1)");
    }
    p.zero_stage = 1;
  }
  if (a.overlap_grad_reduce) p.overlap_grad_reduce = true;
  if (a.fp8_format) {
    const Fp8Recipe r = megatron_fp8(a);
    if (peers.fp8 && p.fp8 != r) {
      throw InputError("--fp8",
                       fmt::format("{} given with Megatron-LM's --fp8-format (recipe {})", name(p.fp8), name(r)),
                       "one of them");
    }
    p.fp8 = r;
  } else if (a.fp8_recipe) {
    throw InputError("--fp8-recipe", "given without --fp8-format (Megatron-LM then trains without FP8)",
                     "--fp8-format hybrid with it");
  }
  if (a.moe_dispatch_fwd_dtype) {  // transformer_config.py: the dispatch's wire type, bf16 or mxfp8
    const std::string& t = *a.moe_dispatch_fwd_dtype;
    if (t != "bf16" && t != "mxfp8") throw InputError("--moe-dispatch-fwd-dtype", "\"" + t + "\"", "bf16 or mxfp8");
    // Asked both ways (bf16 with --fp8-dispatch) is refused as --fp8 against --fp8-format is: bf16 was ignored.
    if (peers.fp8_dispatch && p.fp8_dispatch != (t == "mxfp8")) {
      throw InputError("--moe-dispatch-fwd-dtype",
                       fmt::format("{} given with --fp8-dispatch {}", t, p.fp8_dispatch ? "on" : "off"),
                       "one of them");
    }
    if (t == "mxfp8") p.fp8_dispatch = true;
  }
  // A pasted MoE line's dispatcher and MoE layer pattern: what commscale models is read, the rest refused by name
  // (they were unknown flags to the command line, Megatron-LM's defaults alltoall and 1 among them).
  if (a.moe_token_dispatcher_type && *a.moe_token_dispatcher_type != "alltoall") {
    throw InputError("--moe-token-dispatcher-type",
                     fmt::format("\"{}\" is not modelled", *a.moe_token_dispatcher_type),
                     "alltoall, the dispatcher commscale models (src/workload/MOE.md)");
  }
  if (a.moe_layer_freq && *a.moe_layer_freq != "1") {
    throw InputError("--moe-layer-freq",
                     fmt::format("\"{}\": dense layers among MoE ones are not modelled", *a.moe_layer_freq),
                     "1 (every layer MoE; --first-dense-layers N for leading dense layers)");
  }
  if ((a.moe_token_dispatcher_type || a.moe_layer_freq) && !m.moe.enabled()) {
    throw InputError(a.moe_token_dispatcher_type ? "--moe-token-dispatcher-type" : "--moe-layer-freq",
                     fmt::format("given for {}, which has no experts", m.name), "a model with experts (--num-experts)");
  }
  if (a.no_gradient_accumulation_fusion) p.gradient_accumulation_fusion = false;
  // Asked as given, not as non-zero: a 0 given is refused (it was read as the flag left out).
  if (a.layers_per_virtual_stage) {
    const int per_chunk = *a.layers_per_virtual_stage;
    if (per_chunk < 1) {
      throw InputError("--num-layers-per-virtual-pipeline-stage", fmt::format("{} layers per chunk", per_chunk),
                       "at least 1, a divisor of layers / pp");
    }
    if (m.layers % (p.pp * per_chunk) != 0) {
      throw InputError("--num-layers-per-virtual-pipeline-stage",
                       fmt::format("{} layers per chunk do not split {} layers over pp {}", per_chunk, m.layers, p.pp),
                       "a divisor of layers / pp");
    }
    if (peers.chunks) {
      throw InputError("--num-layers-per-virtual-pipeline-stage", "given with --chunks", "one of them");
    }
    p.chunks = m.layers / (p.pp * per_chunk);
  }
  // A virtual pipeline is Megatron-LM's interleaved schedule: say so unless the schedule was chosen (without
  // a pipeline, the plan check names --chunks).
  if (p.chunks > 1 && p.pp > 1 && !peers.schedule) p.schedule = ScheduleKind::kInterleaved;
}

void check_megatron_model(const MegatronFlags& a, const TransformerConfig& m) {
  if (!a.max_position_embeddings) return;
  const std::int64_t positions = *a.max_position_embeddings;
  if (positions < m.seq) {
    throw InputError("--max-position-embeddings",
                     fmt::format("{} is less than the sequence length {}", positions, m.seq), "at least --seq-length");
  }
}

std::string megatron_model_flags_text(const MegatronFlags& a) {
  std::string out;
  if (a.swiglu) out += " --swiglu";
  if (a.group_query_attention) out += " --group-query-attention";
  if (a.multi_latent_attention) out += " --multi-latent-attention";
  if (a.normalization) out += fmt::format(" --normalization {}", *a.normalization);
  if (a.position_embedding) out += fmt::format(" --position-embedding-type {}", *a.position_embedding);
  if (a.disable_bias_linear) out += " --disable-bias-linear";
  if (a.untie_embeddings) out += " --untie-embeddings-and-output-weights";
  if (a.bf16) out += " --bf16";
  if (a.fp16) out += " --fp16";
  return out;
}

}  // namespace commscale

#include "cli/megatron_flags.hpp"

#include <array>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

const std::string kGroup = "Megatron-LM flags (converted)";

// Megatron-LM flags that change what a step computes or sends in ways commscale does not model.
constexpr std::array<std::string_view, 14> kUnmodelledWithValue = {"--context-parallel-size",
                                                                   "--expert-model-parallel-size",
                                                                   "--expert-tensor-parallel-size",
                                                                   "--num-experts",
                                                                   "--moe-router-topk",
                                                                   "--pipeline-model-parallel-layout",
                                                                   "--fp8-format",
                                                                   "--make-vocab-size-divisible-by",
                                                                   "--kv-channels",
                                                                   "--data-parallel-sharding-strategy",
                                                                   "--transformer-impl",
                                                                   "--attention-backend",
                                                                   "--ddp-bucket-size",
                                                                   "--tp-comm-overlap-cfg"};
constexpr std::array<std::string_view, 11> kUnmodelledFlags = {"--overlap-param-gather",
                                                               "--tp-comm-overlap",
                                                               "--moe-grouped-gemm",
                                                               "--fp8",
                                                               "--squared-relu",
                                                               "--apply-layernorm-1p",
                                                               "--no-position-embedding",
                                                               "--add-qkv-bias",
                                                               "--qk-layernorm",
                                                               "--use-torch-fsdp2",
                                                               "--defer-embedding-wgrad-compute"};
// Megatron-LM flags of a launch line that do not change a step's time or memory: the optimizer's
// hyperparameters, data, checkpoints, logging. Rejected too, so that nothing pasted is silently dropped.
constexpr std::array<std::string_view, 26> kTrainingWithValue = {"--lr",
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
                                                                 "--hidden-dropout"};

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

constexpr std::string_view kChangesStep = "it changes the step in ways commscale's model leaves out";
constexpr std::string_view kNoEffect = "it does not change a step's time or memory (drop it from the pasted line)";

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
  for (std::string_view f : kTrainingWithValue) add_rejected(cmd, f, true, kNoEffect);
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
  for (std::string_view f : kUnmodelledWithValue) add_rejected(cmd, f, true, kChangesStep);
  for (std::string_view f : kUnmodelledFlags) add_rejected(cmd, f, false, kChangesStep);
}

void apply_megatron_model_flags(const ModelPlanArguments& args, ModelOverrides& o) {
  const MegatronArguments& a = args.megatron;
  if (a.swiglu) {
    if (o.activation && *o.activation != MlpActivation::kSwiGlu) {
      throw InputError("--swiglu", "given with --activation gelu", "one of them");
    }
    o.activation = MlpActivation::kSwiGlu;
  }
  // Megatron-LM reads --num-query-groups only with --group-query-attention: a line with one alone is a
  // mistake there, and taken as one here.
  if (a.group_query_attention && !option_given(args.command, "--kv-heads")) {
    throw InputError("--group-query-attention", "given without --num-query-groups", "--num-query-groups N");
  }
  if (!a.normalization.empty()) {
    if (a.normalization != "LayerNorm" && a.normalization != "RMSNorm") {
      throw InputError("--normalization", fmt::format("\"{}\"", a.normalization), "LayerNorm or RMSNorm");
    }
    o.norm = a.normalization == "LayerNorm" ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  }
  if (!a.position_embedding.empty()) {
    if (a.position_embedding != "learned_absolute" && a.position_embedding != "rope") {
      throw InputError("--position-embedding-type", fmt::format("\"{}\"", a.position_embedding),
                       "learned_absolute or rope");
    }
    o.positions = a.position_embedding == "rope" ? PositionEmbedding::kRotary : PositionEmbedding::kLearned;
  }
  if (a.disable_bias_linear) o.linear_bias = false;
  if (a.untie_embeddings) o.tied_embeddings = false;
  if (a.bf16 && a.fp16) throw InputError("--bf16", "given with --fp16", "one training type");
  if ((a.bf16 || a.fp16) && o.dtype)
    throw InputError(a.bf16 ? "--bf16" : "--fp16", "given with --dtype", "one of them");
  if (a.bf16) o.dtype = DataType::kBFloat16;
  if (a.fp16) o.dtype = DataType::kFloat16;
}

namespace {

Recompute megatron_recompute(const MegatronArguments& a) {
  if (a.recompute_activations) {
    if (!a.recompute_granularity.empty() && a.recompute_granularity != "selective") {
      throw InputError("--recompute-activations",
                       fmt::format("given with --recompute-granularity {}", a.recompute_granularity),
                       "one of them (--recompute-activations is selective recompute)");
    }
    return Recompute::kSelective;
  }
  if (a.recompute_granularity == "selective") return Recompute::kSelective;
  if (a.recompute_granularity != "full") {
    throw InputError("--recompute-granularity", fmt::format("\"{}\"", a.recompute_granularity), "full or selective");
  }
  // commscale's full recompute checkpoints every layer: Megatron-LM's uniform method with one layer per chunk.
  if (a.recompute_method != "uniform" || a.recompute_num_layers != 1) {
    throw InputError("--recompute-method",
                     fmt::format("{} with --recompute-num-layers {}",
                                 a.recompute_method.empty() ? "missing" : a.recompute_method, a.recompute_num_layers),
                     "uniform with --recompute-num-layers 1 (every layer recomputed: the full recompute commscale "
                     "models)");
  }
  return Recompute::kFull;
}

}  // namespace

void apply_megatron_plan_flags(const ModelPlanArguments& args, const TransformerConfig& m, ParallelPlan& p) {
  const MegatronArguments& a = args.megatron;
  const CLI::App* cmd = args.command;
  if (!a.recompute_granularity.empty() || a.recompute_activations) {
    const Recompute r = megatron_recompute(a);
    if (option_given(cmd, "--recompute") && p.recompute != r) {
      throw InputError("--recompute", fmt::format("{} given with Megatron-LM's {}", name(p.recompute), name(r)),
                       "one of them");
    }
    p.recompute = r;
  } else if (!a.recompute_method.empty() || a.recompute_num_layers != 0) {
    throw InputError(a.recompute_method.empty() ? "--recompute-num-layers" : "--recompute-method",
                     "given without --recompute-granularity full", "--recompute-granularity full with them");
  }
  if (a.distributed_optimizer) {
    if (option_given(cmd, "--zero") && p.zero_stage != 1) {
      throw InputError("--use-distributed-optimizer", fmt::format("given with --zero {}", p.zero_stage),
                       "one of them (the distributed optimizer is ZeRO 1)");
    }
    p.zero_stage = 1;
  }
  if (a.overlap_grad_reduce) p.overlap_grad_reduce = true;
  if (a.no_gradient_accumulation_fusion) p.gradient_accumulation_fusion = false;
  // Asked as given, not as non-zero: a 0 given is refused (it was read as the flag left out).
  if (option_given(cmd, "--num-layers-per-virtual-pipeline-stage") || a.layers_per_virtual_stage != 0) {
    const int per_chunk = a.layers_per_virtual_stage;
    if (per_chunk < 1) {
      throw InputError("--num-layers-per-virtual-pipeline-stage", fmt::format("{} layers per chunk", per_chunk),
                       "at least 1, a divisor of layers / pp");
    }
    if (m.layers % (p.pp * per_chunk) != 0) {
      throw InputError("--num-layers-per-virtual-pipeline-stage",
                       fmt::format("{} layers per chunk do not split {} layers over pp {}", per_chunk, m.layers, p.pp),
                       "a divisor of layers / pp");
    }
    if (option_given(cmd, "--chunks")) {
      throw InputError("--num-layers-per-virtual-pipeline-stage", "given with --chunks", "one of them");
    }
    p.chunks = m.layers / (p.pp * per_chunk);
  }
  // A virtual pipeline is Megatron-LM's interleaved schedule: say so unless the schedule was chosen (without
  // a pipeline, the plan check names --chunks).
  if (p.chunks > 1 && p.pp > 1 && !option_given(cmd, "--schedule")) p.schedule = ScheduleKind::kInterleaved;
}

void check_megatron_model(const ModelPlanArguments& args, const TransformerConfig& m) {
  const std::int64_t positions = args.megatron.max_position_embeddings;
  if (option_given(args.command, "--max-position-embeddings") && positions < m.seq) {
    throw InputError("--max-position-embeddings",
                     fmt::format("{} is less than the sequence length {}", positions, m.seq), "at least --seq-length");
  }
}

std::string megatron_model_flags_text(const ModelPlanArguments& args) {
  const MegatronArguments& a = args.megatron;
  std::string out;
  if (a.swiglu) out += " --swiglu";
  if (a.group_query_attention) out += " --group-query-attention";
  if (!a.normalization.empty()) out += fmt::format(" --normalization {}", a.normalization);
  if (!a.position_embedding.empty()) out += fmt::format(" --position-embedding-type {}", a.position_embedding);
  if (a.disable_bias_linear) out += " --disable-bias-linear";
  if (a.untie_embeddings) out += " --untie-embeddings-and-output-weights";
  if (a.bf16) out += " --bf16";
  if (a.fp16) out += " --fp16";
  return out;
}

}  // namespace commscale

#include "cli/model_options.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "cli/megatron_flags.hpp"
#include "cli/number_options.hpp"
#include "cli/option_rules.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/predict_options.hpp"
#include "core/error.hpp"
#include "workload/hf_config.hpp"
#include "workload/model_spec.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

template <class T>
std::optional<T> if_given(const CLI::Option* option, T value) {
  return option != nullptr && option->count() > 0 ? std::optional<T>(value) : std::nullopt;
}

std::string preset_names() {
  std::string names;
  for (const TransformerConfig& m : model_presets()) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

void model_flags(CLI::App& cmd, ModelPlanArguments* a) {
  const std::string group = "Model";
  a->command = &cmd;
  cmd.add_option("--model", a->model, "a preset: " + preset_names())->group(group);
  mark_input_file(cmd.add_option("--model-file", a->model_file,
                                 "a model as JSON (keys: layers, hidden, heads, kv_heads, ffn, vocab, seq, activation, "
                                 "norm, positions, linear_bias, tied_embeddings, dtype), or a Hugging Face config.json")
                      ->group(group));
  mark_input_file(cmd.add_option("--hf-config", a->hf_config,
                                 fmt::format("a Hugging Face config.json ({}); the sequence length is --seq, default "
                                             "min(max_position_embeddings, {})",
                                             supported_hf_architectures(), kDefaultHfSeq))
                      ->group(group));
  auto& g = a->given;
  g.layers = cmd.add_option("--layers,--num-layers", a->layers, "transformer layers (overrides the preset or file)")
                 ->group(group);
  g.hidden = cmd.add_option("--hidden,--hidden-size", a->hidden, "hidden size")->group(group);
  g.heads = cmd.add_option("--heads,--num-attention-heads", a->heads, "attention heads")->group(group);
  g.kv_heads = cmd.add_option("--kv-heads,--num-query-groups", a->kv_heads,
                              "KV heads, fewer than --heads for GQA (default: --heads)")
                   ->group(group);
  g.ffn = cmd.add_option("--ffn,--ffn-hidden-size", a->ffn, "MLP inner size (default 4 x hidden; required with swiglu)")
              ->group(group);
  g.vocab = cmd.add_option("--vocab,--vocab-size", a->vocab,
                           "vocabulary size; 0: a bare stack of blocks, no embedding, logits or loss")
                ->group(group);
  g.seq = cmd.add_option("--seq,--seq-length", a->seq, "sequence length")->group(group);
  g.activation = cmd.add_option("--activation", a->activation, "gelu or swiglu")->group(group);
  g.dtype = cmd.add_option("--dtype", a->dtype, "training type: bf16 (default), fp16 or fp32")->group(group);
  add_megatron_model_flags(cmd, &a->megatron);
  add_plan_file_option(cmd, a);
}

void add_plan_options(CLI::App& cmd, ModelPlanArguments* a) {
  const std::string group = "Parallel plan";
  a->given.world = cmd.add_option("--world", a->world, "ranks (GPUs) in the job (default: dp x tp x pp)")->group(group);
  cmd.add_option("--tp,--tensor-model-parallel-size", a->tp, "tensor-parallel size")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--pp,--pipeline-model-parallel-size", a->pp, "pipeline-parallel size (stages)")
      ->capture_default_str()
      ->group(group);
  a->given.dp = cmd.add_option("--dp", a->dp, "data-parallel size (default: world / (tp x pp))")->group(group);
  cmd.add_flag("--sp,--sequence-parallel", a->sp, "sequence parallelism (with --tp 2 or more)")->group(group);
  cmd.add_option("--zero", a->zero, "ZeRO stage 0, 1, 2 or 3")->capture_default_str()->group(group);
  cmd.add_option("--recompute", a->recompute, "activation recompute: none, selective or full")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--optimizer", a->optimizer,
                 "the step's optimizer: adam (mixed precision, fp32 master weights and moments), adamw (PyTorch's "
                 "AdamW on the weights' own type), adam8bit (bitsandbytes' 8-bit moments, block-wise scales, fp32 "
                 "master weights), sgd (no state) or none (forward and backward only)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--offload-optimizer", a->offload_optimizer,
                 "ZeRO-Offload: none, or cpu (optimizer state and fp32 gradients in host memory, the update on the "
                 "CPU; needs --zero 1, 2 or 3)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--offload-params", a->offload_params,
                 "ZeRO-Infinity: none, or cpu (ZeRO-3's parameter shards in host memory, copied in per layer; needs "
                 "--zero 3 and --offload-optimizer cpu)")
      ->capture_default_str()
      ->group(group);
  cmd.add_flag("--offload-activations", a->offload_activations,
               "what each layer keeps for its backward goes to host memory after its forward, back before its "
               "backward")
      ->group(group);
  add_lora_options(cmd, a, group);
  cmd.add_flag("--flash-attn,--use-flash-attn,!--no-flash-attn", a->flash_attention,
               "fused (flash) attention, on by default; --no-flash-attn: scores, softmax and context as separate "
               "kernels, the score matrix kept for the backward")->group(group);
  cmd.add_option("--kernels", a->kernels,
                 "memory-bound kernels: fused (Megatron-LM's) or eager (PyTorch's, one per tensor operation, "
                 "with gradient accumulation by adds)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--micro-batch,--micro-batch-size", a->micro_batch, "sequences per microbatch")
      ->capture_default_str()
      ->group(group);
  cmd.add_option(
         "--global-batch,--global-batch-size", a->global_batch,
         "sequences per step over all replicas (default: 4 microbatches per pipeline stage, 1 without a pipeline)")
      ->group(group);
  cmd.add_option("--schedule", a->schedule, "pipeline schedule: gpipe, 1f1b or interleaved")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--chunks,--num-virtual-stages-per-pipeline-rank", a->chunks,
                 "model chunks per stage with --schedule interleaved")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--order", a->order, "rank layout, fastest-varying first: tp-dp-pp keeps tp ranks adjacent (one node)")
      ->capture_default_str()
      ->group(group);
  add_framework_option(cmd, &a->framework)->group(group);
  cmd.add_option("--first-stage-layers,--decoder-first-pipeline-num-layers", a->first_stage_layers,
                 "transformer layers of the first pipeline stage (default: as many as the others); the stages "
                 "between the first and the last share the rest evenly")
      ->group(group);
  cmd.add_option("--last-stage-layers,--decoder-last-pipeline-num-layers", a->last_stage_layers,
                 "transformer layers of the last pipeline stage (default: as many as the others)")
      ->group(group);
  add_real_option(cmd, "--bucket-mb", &a->bucket_mib, "data-parallel gradient bucket, MiB",
                  {0.0, 1e6, "a positive size in MiB, at most 1000000", "", true})
      ->capture_default_str()
      ->group(group);
  add_megatron_plan_flags(cmd, &a->megatron);
}

TransformerConfig resolve(const ModelPlanArguments& a) {
  ModelOverrides o;
  const auto& g = a.given;
  o.layers = if_given(g.layers, a.layers);
  o.hidden = if_given(g.hidden, a.hidden);
  o.heads = if_given(g.heads, a.heads);
  o.kv_heads = if_given(g.kv_heads, a.kv_heads);
  o.ffn = if_given(g.ffn, a.ffn);
  o.vocab = if_given(g.vocab, a.vocab);
  o.seq = if_given(g.seq, a.seq);
  if (g.activation != nullptr && g.activation->count() > 0)
    o.activation = parse_activation(a.activation, "--activation");
  if (g.dtype != nullptr && g.dtype->count() > 0) o.dtype = parse_data_type(a.dtype, "--dtype");
  apply_megatron_model_flags(a, o);
  ModelSource source{a.model, a.model_file, a.hf_config, std::nullopt, ""};
  const bool flag_model = !a.model.empty() || !a.model_file.empty() || !a.hf_config.empty();
  if (!flag_model && a.loaded_plan && a.loaded_plan->model.document) {
    source.document = a.loaded_plan->model.document;
    source.origin = fmt::format("{}: model", a.loaded_plan->path);
  }
  TransformerConfig m = resolve_model(source, o);
  check_megatron_model(a, m);
  return m;
}

// Whether a plan flag was given, on the command line or by the plan file.
bool plan_flag_given(const ModelPlanArguments& a, const std::string& flag) {
  return option_given(a.command, flag) || a.from_file.contains(flag);
}

// What the framework does where no flag (nor the plan file) said otherwise (parallel/framework.hpp).
void apply_framework(const ModelPlanArguments& a, ParallelPlan& p) {
  p.framework = a.framework.empty() ? a.default_framework : parse_framework(a.framework, "--framework");
  const FrameworkDefaults& d = defaults_of(p.framework);
  if (!plan_flag_given(a, "--kernels")) p.kernels = d.kernels;
  if (!plan_flag_given(a, "--flash-attn")) p.flash_attention = d.flash_attention;  // --no-flash-attn included
  if (!plan_flag_given(a, "--optimizer")) p.optimizer = d.optimizer;
  if (!plan_flag_given(a, "--zero") && !a.megatron.distributed_optimizer) p.zero_stage = d.zero_stage;
  p.overlap_grad_reduce = d.overlap_grad_reduce;
}

// --world and --dp: either may be left out and follows from the other.
int data_parallel_size(const ModelPlanArguments& a, int* world) {
  const bool world_given = (a.given.world != nullptr && a.given.world->count() > 0) || a.from_file.contains("--world");
  const bool dp_given = (a.given.dp != nullptr && a.given.dp->count() > 0) || a.from_file.contains("--dp");
  const int tp_pp = checked_world_size(1, a.tp, a.pp);
  const int dp = dp_given ? a.dp : (world_given ? a.world / tp_pp : 1);
  if (world_given && !dp_given && (a.world < 1 || a.world % tp_pp != 0)) {
    throw InputError("--world", fmt::format("{} ranks do not split into tp {} x pp {}", a.world, a.tp, a.pp),
                     "a multiple of tp * pp");
  }
  *world = world_given ? a.world : checked_world_size(dp, a.tp, a.pp);
  return dp;
}

}  // namespace

void add_model_options(CLI::App& command, ModelPlanArguments* args) { model_flags(command, args); }

void add_lora_options(CLI::App& cmd, ModelPlanArguments* a, const std::string& group) {
  cmd.add_option("--lora-rank", a->lora_rank,
                 "LoRA fine-tuning: the adapters' rank r (0: none, every weight trains); the base frozen, only the "
                 "adapters train")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--lora-base-bits", a->lora_base_bits,
                 "the frozen base's linear weights with --lora-rank: 16 (the model's dtype) or 4 (QLoRA's NF4)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--lora-targets", a->lora_targets,
                 "the linear layers with adapters: qv (q_proj, v_proj), qkvo (the attention's four) or all (also "
                 "the MLP's)")
      ->capture_default_str()
      ->group(group);
}

LoraSpec lora_from_arguments(const ModelPlanArguments& a) {
  const bool rank_given = option_given(a.command, "--lora-rank");
  if (rank_given && a.lora_rank < 1) {
    throw InputError("--lora-rank", fmt::format("{}", a.lora_rank),
                     "the adapters' rank, 1 or more (leave the flag out to train every weight)");
  }
  for (const char* flag : {"--lora-base-bits", "--lora-targets"}) {
    if (!rank_given && option_given(a.command, flag)) {
      throw InputError(flag, "given without --lora-rank", "--lora-rank R too: it only shapes LoRA's adapters");
    }
  }
  LoraSpec l;
  l.rank = a.lora_rank;
  l.base_bits = a.lora_base_bits;
  l.targets = parse_lora_targets(a.lora_targets, "--lora-targets");
  return l;
}

TransformerConfig finish_model_options(const ModelPlanArguments& args) { return resolve(args); }

void add_model_plan_options(CLI::App& command, ModelPlanArguments* args) {
  model_flags(command, args);
  add_plan_options(command, args);
}

namespace {

// A value the plan file gave is named by its file and key, not by the flag it stands for.
[[noreturn]] void rethrow_from_file(const ModelPlanArguments& a, const InputError& e) {
  const std::string message = e.what();
  for (const std::string& flag : a.from_file) {
    if (message.rfind(flag + ":", 0) == 0) {
      throw InputError(fmt::format("{}: plan.{} (as {})", a.loaded_plan->path, plan_file_key(flag), flag),
                       message.substr(flag.size() + 2));
    }
  }
  throw e;
}

CheckedPlan plan_from_arguments(const ModelPlanArguments& a) {
  TransformerConfig model = resolve(a);
  int world = 0;
  ParallelPlan p;
  p.tp = a.tp;
  p.pp = a.pp;
  p.dp = data_parallel_size(a, &world);
  p.sequence_parallel = a.sp;
  p.zero_stage = a.zero;
  p.recompute = parse_recompute(a.recompute, "--recompute");
  p.optimizer = parse_optimizer(a.optimizer, "--optimizer");
  p.offload_optimizer = parse_offload_device(a.offload_optimizer, "--offload-optimizer");
  p.offload_params = parse_offload_device(a.offload_params, "--offload-params");
  p.offload_activations = a.offload_activations;
  p.lora = lora_from_arguments(a);
  p.flash_attention = a.flash_attention;
  p.kernels = parse_kernel_set(a.kernels, "--kernels");
  p.micro_batch = a.micro_batch;
  p.schedule = parse_schedule(a.schedule, "--schedule");
  p.chunks = a.chunks;
  p.order = a.order;
  p.global_batch = a.global_batch != 0 ? a.global_batch : p.dp * p.micro_batch * (p.pp > 1 ? 4 * p.pp : 1);
  p.bucket_bytes = Bytes(static_cast<std::uint64_t>(std::llround(a.bucket_mib * static_cast<double>(kMiB))));
  p.first_stage_layers = a.first_stage_layers;
  p.last_stage_layers = a.last_stage_layers;
  apply_framework(a, p);
  apply_megatron_plan_flags(a, model, p);
  return CheckedPlan(std::move(model), std::move(p), world);
}

}  // namespace

predict::TrainingChoices training_choices(const ModelPlanArguments& a, DataType dtype, bool flash_attention) {
  predict::TrainingChoices c;
  c.dtype = dtype;
  if (a.given.dtype != nullptr && a.given.dtype->count() > 0) {
    c.dtype_flag = "--dtype";
  } else if (a.megatron.bf16 || a.megatron.fp16) {
    c.dtype_flag = a.megatron.bf16 ? "--bf16" : "--fp16";
  }
  c.flash_attention = flash_attention;
  if (flash_attention && option_given(a.command, "--flash-attn")) c.flash_flag = "--flash-attn";
  return c;
}

CheckedPlan fit_plan_to_gpu(const CheckedPlan& plan, const ModelPlanArguments& a, const hw::GpuSpec& gpu,
                            std::vector<std::string>* notes) {
  predict::TrainingChoices c = training_choices(a, plan.model().dtype, plan.plan().flash_attention);
  *notes = predict::fit_to_gpu(gpu, c);
  if (notes->empty()) return plan;
  TransformerConfig model = plan.model();
  model.dtype = c.dtype;
  ParallelPlan p = plan.plan();
  p.flash_attention = c.flash_attention;
  return CheckedPlan(std::move(model), std::move(p), plan.world());
}

CheckedPlan finish_model_plan_options(const ModelPlanArguments& a) {
  try {
    return plan_from_arguments(a);
  } catch (const InputError& e) {
    rethrow_from_file(a, e);
  }
}

}  // namespace commscale

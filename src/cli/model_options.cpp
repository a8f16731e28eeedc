#include "cli/model_options.hpp"

#include <initializer_list>
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

// Keeps the options just added, to tell them from a command's own options of the same names.
void keep(const CLI::App& cmd, ModelPlanArguments* a, std::initializer_list<const char*> flags) {
  for (const char* flag : flags) a->options[flag] = cmd.get_option(flag);
}

bool given(const ModelPlanArguments& a, const std::string& flag) {
  const auto it = a.options.find(flag);
  return it != a.options.end() && it->second->count() > 0;
}

template <class T>
std::optional<T> if_given(const ModelPlanArguments& a, const std::string& flag, const T& value) {
  return given(a, flag) ? std::optional<T>(value) : std::nullopt;
}

std::optional<std::string> if_named(const std::string& value) {
  return value.empty() ? std::nullopt : std::optional<std::string>(value);
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
  cmd.add_option("--layers,--num-layers", a->layers, "transformer layers (overrides the preset or file)")->group(group);
  cmd.add_option("--hidden,--hidden-size", a->hidden, "hidden size")->group(group);
  cmd.add_option("--heads,--num-attention-heads", a->heads, "attention heads")->group(group);
  cmd.add_option("--kv-heads,--num-query-groups", a->kv_heads,
                 "KV heads, fewer than --heads for GQA (default: --heads)")
      ->group(group);
  cmd.add_option("--ffn,--ffn-hidden-size", a->ffn, "MLP inner size (default 4 x hidden; required with swiglu)")
      ->group(group);
  cmd.add_option("--vocab,--vocab-size", a->vocab,
                 "vocabulary size; 0: a bare stack of blocks, no embedding, logits or loss")
      ->group(group);
  cmd.add_option("--seq,--seq-length", a->seq, "sequence length")->group(group);
  cmd.add_option("--activation", a->activation, "gelu or swiglu")->group(group);
  cmd.add_option("--dtype", a->dtype, "training type: bf16 (default), fp16 or fp32")->group(group);
  const std::string moe = "Model: mixture of experts (src/workload/MOE.md)";
  cmd.add_option("--experts,--num-experts", a->moe.experts, "routed experts of each MoE layer (0: a dense model)")
      ->group(moe);
  cmd.add_option("--top-k,--moe-router-topk", a->moe.top_k, "experts each token is routed to")->group(moe);
  cmd.add_option("--expert-ffn,--moe-ffn-hidden-size", a->moe.expert_ffn,
                 "a routed expert's MLP inner size (default: --ffn's, as Megatron-LM's)")
      ->group(moe);
  cmd.add_option("--shared-ffn,--moe-shared-expert-intermediate-size", a->moe.shared_ffn,
                 "the shared experts' MLP inner size, summed (0: none)")
      ->group(moe);
  cmd.add_option("--first-dense-layers", a->moe.first_dense_layers,
                 "leading layers with a dense MLP of --ffn (DeepSeek's first_k_dense_replace)")
      ->group(moe);
  add_real_option(cmd, "--capacity-factor,--moe-expert-capacity-factor", &a->moe.capacity_factor,
                  "expert capacity as a multiple of an even share, dispatch padded to it (0: dropless)",
                  {0.0, 64.0, "0 (dropless) or a factor up to 64", "", false})
      ->group(moe);
  add_real_option(cmd, "--load-imbalance", &a->moe.load_imbalance,
                  "routing skew, dropless: the most loaded expert-parallel rank's rows over the mean (default 1: "
                  "balanced); its dispatch, experts and combine set the pace",
                  {1.0, 4096.0, "1 (balanced) or more", "", false})
      ->group(moe);
  const std::string mla = "Model: multi-head latent attention (src/workload/MLA.md)";
  cmd.add_option("--q-lora-rank", a->mla.q_lora_rank,
                 "the queries' latent (0: queries projected from the hidden state)")
      ->group(mla);
  cmd.add_option("--kv-lora-rank", a->mla.kv_lora_rank, "the keys' and values' latent (0: ordinary attention)")
      ->group(mla);
  cmd.add_option("--qk-nope-head-dim,--qk-head-dim", a->mla.qk_nope_head_dim,
                 "a query's and key's head dimension without the rotary part")
      ->group(mla);
  cmd.add_option("--qk-rope-head-dim,--qk-pos-emb-head-dim", a->mla.qk_rope_head_dim,
                 "the rotary part of a query's and key's head")
      ->group(mla);
  cmd.add_option("--v-head-dim", a->mla.v_head_dim, "a value's head dimension")->group(mla);
  keep(cmd, a,
       {"--layers", "--hidden", "--heads", "--kv-heads", "--ffn", "--vocab", "--seq", "--activation", "--dtype",
        "--experts", "--top-k", "--expert-ffn", "--shared-ffn", "--first-dense-layers", "--capacity-factor",
        "--load-imbalance"});
  keep(cmd, a, {"--q-lora-rank", "--kv-lora-rank", "--qk-nope-head-dim", "--qk-rope-head-dim", "--v-head-dim"});
  add_megatron_model_flags(cmd, &a->megatron);
  add_plan_file_option(cmd, a);
}

void add_plan_options(CLI::App& cmd, ModelPlanArguments* a) {
  const std::string group = "Parallel plan";
  cmd.add_option("--world", a->world, "ranks (GPUs) in the job (default: dp x tp x pp)")->group(group);
  cmd.add_option("--tp,--tensor-model-parallel-size", a->plan.tp, "tensor-parallel size")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--pp,--pipeline-model-parallel-size", a->plan.pp, "pipeline-parallel size (stages)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--dp", a->dp, "data-parallel size (default: world / (tp x pp))")->group(group);
  cmd.add_option("--ep,--expert-model-parallel-size", a->plan.ep,
                 "expert-parallel size for a model with experts: each MoE layer's experts split over ep of a stage's "
                 "tp x cp x dp ranks")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--etp,--expert-tensor-parallel-size", a->plan.etp,
                 "expert-tensor-parallel size for a model with experts: each expert's fc1 and fc2 split over etp "
                 "ranks (MOE.md; Megatron-LM's default when the flag is left out is tp, commscale's 1)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--cp,--context-parallel-size", a->plan.cp,
                 "context-parallel size: each sequence split over cp ranks, attention exchanging keys and values "
                 "(CONTEXT_PARALLEL.md)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--cp-comm-type", a->plan.cp_comm_type,
                 "how context-parallel attention exchanges keys and values: p2p (a ring overlapped with attention) "
                 "or all_gather")
      ->capture_default_str()
      ->group(group);
  cmd.add_flag("--sp,--sequence-parallel", a->plan.sp, "sequence parallelism (with --tp 2 or more)")->group(group);
  cmd.add_option("--zero", a->plan.zero, "ZeRO stage 0, 1, 2 or 3")->capture_default_str()->group(group);
  cmd.add_option("--recompute", a->plan.recompute, "activation recompute: none, selective or full")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--optimizer", a->plan.optimizer,
                 "the step's optimizer: adam (mixed precision, fp32 master weights and moments), adamw (PyTorch's "
                 "AdamW on the weights' own type), adam8bit (bitsandbytes' 8-bit moments, block-wise scales, fp32 "
                 "master weights), sgd (no state) or none (forward and backward only)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--offload-optimizer", a->plan.offload_optimizer,
                 "ZeRO-Offload: none, or cpu (optimizer state and fp32 gradients in host memory, the update on the "
                 "CPU; needs --zero 1, 2 or 3)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--offload-params", a->plan.offload_params,
                 "ZeRO-Infinity: none, or cpu (ZeRO-3's parameter shards in host memory, copied in per layer; needs "
                 "--zero 3 and --offload-optimizer cpu)")
      ->capture_default_str()
      ->group(group);
  cmd.add_flag("--offload-activations", a->plan.offload_activations,
               "what each layer keeps for its backward goes to host memory after its forward, back before its "
               "backward")
      ->group(group);
  add_lora_options(cmd, a, group);
  add_fp8_option(cmd, a, group);
  cmd.add_flag("--flash-attn,--use-flash-attn,!--no-flash-attn", a->plan.flash_attention,
               "fused (flash) attention, on by default; --no-flash-attn: scores, softmax and context as separate "
               "kernels, the score matrix kept for the backward")
      ->group(group);
  cmd.add_option("--kernels", a->plan.kernels,
                 "memory-bound kernels: fused (Megatron-LM's) or eager (PyTorch's, one per tensor operation, "
                 "with gradient accumulation by adds)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--micro-batch,--micro-batch-size", a->plan.micro_batch, "sequences per microbatch")
      ->capture_default_str()
      ->group(group);
  cmd.add_option(
         "--global-batch,--global-batch-size", a->global_batch,
         "sequences per step over all replicas (default: 4 microbatches per pipeline stage, 1 without a pipeline)")
      ->group(group);
  cmd.add_option("--schedule", a->plan.schedule, "pipeline schedule: gpipe, 1f1b or interleaved")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--chunks,--num-virtual-stages-per-pipeline-rank", a->plan.chunks,
                 "model chunks per stage with --schedule interleaved")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--order", a->plan.order,
                 "rank layout, fastest-varying first: tp-dp-pp keeps tp ranks adjacent (one node)")
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
  add_real_option(cmd, "--bucket-mb", &a->plan.bucket_mib, "data-parallel gradient bucket, MiB",
                  {0.0, 1e6, "a positive size in MiB, at most 1000000", "", true})
      ->capture_default_str()
      ->group(group);
  keep(cmd, a,
       {"--world",
        "--tp",
        "--pp",
        "--dp",
        "--ep",
        "--etp",
        "--cp",
        "--cp-comm-type",
        "--sp",
        "--zero",
        "--recompute",
        "--optimizer",
        "--offload-optimizer",
        "--offload-params",
        "--offload-activations",
        "--flash-attn",
        "--kernels",
        "--micro-batch",
        "--global-batch",
        "--schedule",
        "--chunks",
        "--order",
        "--first-stage-layers",
        "--last-stage-layers",
        "--bucket-mb"});
  add_megatron_plan_flags(cmd, &a->megatron);
}

}  // namespace

void add_model_options(CLI::App& command, ModelPlanArguments* args) { model_flags(command, args); }

void add_lora_options(CLI::App& cmd, ModelPlanArguments* a, const std::string& group) {
  cmd.add_option("--lora-rank", a->plan.lora_rank,
                 "LoRA fine-tuning: the adapters' rank r (0: none, every weight trains); the base frozen, only the "
                 "adapters train")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--lora-base-bits", a->plan.lora_base_bits,
                 "the frozen base's linear weights with --lora-rank: 16 (the model's dtype) or 4 (QLoRA's NF4)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--lora-targets", a->plan.lora_targets,
                 "the linear layers with adapters: qv (q_proj, v_proj), qkvo (the attention's four) or all (also "
                 "the MLP's)")
      ->capture_default_str()
      ->group(group);
  keep(cmd, a, {"--lora-rank", "--lora-base-bits", "--lora-targets"});
}

LoraSpec lora_from_arguments(const ModelPlanArguments& a) { return resolve_lora(plan_request(a).plan); }

void add_fp8_option(CLI::App& cmd, ModelPlanArguments* a, const std::string& group) {
  cmd.add_option("--fp8", a->plan.fp8,
                 "FP8 linear layers as TransformerEngine runs them (E4M3 forward, E5M2 gradients), with the scaling "
                 "recipe: none, delayed (amax history), current (per-tensor amax before each cast) or block "
                 "(block scales); needs a GPU with FP8 tensor cores")
      ->capture_default_str()
      ->group(group);
  cmd.add_flag("--fp8-dispatch", a->plan.fp8_dispatch,
               "with --fp8 and experts: the MoE dispatch all-to-all's rows in FP8, 1 byte an element plus an fp32 "
               "scale per 128 (DeepSeek-V3's; Megatron-Core's --moe-dispatch-fwd-dtype mxfp8 moves as many bytes); "
               "the combine stays bf16")
      ->group(group);
  keep(cmd, a, {"--fp8", "--fp8-dispatch"});
}

// The flag given, else the plan file's key (search and compare; the other commands resolve a whole plan).
Fp8Recipe fp8_from_arguments(const ModelPlanArguments& a) {
  std::optional<std::string> text = if_given(a, "--fp8", a.plan.fp8);
  if (!text && a.loaded_plan) text = a.loaded_plan->plan.fp8;
  return parse_fp8_recipe(text.value_or("none"), "--fp8");
}

bool fp8_dispatch_from_arguments(const ModelPlanArguments& a) {
  std::optional<bool> dispatch = if_given(a, "--fp8-dispatch", a.plan.fp8_dispatch);
  if (!dispatch && a.loaded_plan) dispatch = a.loaded_plan->plan.fp8_dispatch;
  return dispatch.value_or(false);
}

TransformerConfig finish_model_options(const ModelPlanArguments& args) { return resolve_model(plan_request(args)); }

void add_model_plan_options(CLI::App& command, ModelPlanArguments* args) {
  model_flags(command, args);
  add_plan_options(command, args);
}

predict::TrainingChoices training_choices(const ModelPlanArguments& a, DataType dtype, bool flash_attention) {
  predict::TrainingChoices c;
  c.dtype = dtype;
  if (given(a, "--dtype")) {
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
  c.fp8 = plan.plan().fp8;
  *notes = predict::fit_to_gpu(gpu, c);
  if (notes->empty()) return plan;
  TransformerConfig model = plan.model();
  model.dtype = c.dtype;
  ParallelPlan p = plan.plan();
  p.flash_attention = c.flash_attention;
  return CheckedPlan(std::move(model), std::move(p), plan.world());
}

CheckedPlan finish_model_plan_options(const ModelPlanArguments& a) { return resolve(plan_request(a)); }

PlanRequest plan_request(const ModelPlanArguments& a) {
  PlanRequest r;
  ModelFlags& m = r.model;
  m.preset = if_named(a.model);
  m.model_file = if_named(a.model_file);
  m.hf_config = if_named(a.hf_config);
  m.shape.layers = if_given(a, "--layers", a.layers);
  m.shape.hidden = if_given(a, "--hidden", a.hidden);
  m.shape.heads = if_given(a, "--heads", a.heads);
  m.shape.kv_heads = if_given(a, "--kv-heads", a.kv_heads);
  m.shape.ffn = if_given(a, "--ffn", a.ffn);
  m.shape.vocab = if_given(a, "--vocab", a.vocab);
  m.shape.seq = if_given(a, "--seq", a.seq);
  m.activation = if_given(a, "--activation", a.activation);
  m.dtype = if_given(a, "--dtype", a.dtype);
  m.shape.experts = if_given(a, "--experts", a.moe.experts);
  m.shape.top_k = if_given(a, "--top-k", a.moe.top_k);
  m.shape.expert_ffn = if_given(a, "--expert-ffn", a.moe.expert_ffn);
  m.shape.shared_ffn = if_given(a, "--shared-ffn", a.moe.shared_ffn);
  m.shape.first_dense_layers = if_given(a, "--first-dense-layers", a.moe.first_dense_layers);
  m.shape.capacity_factor = if_given(a, "--capacity-factor", a.moe.capacity_factor);
  m.shape.load_imbalance = if_given(a, "--load-imbalance", a.moe.load_imbalance);
  m.shape.q_lora_rank = if_given(a, "--q-lora-rank", a.mla.q_lora_rank);
  m.shape.kv_lora_rank = if_given(a, "--kv-lora-rank", a.mla.kv_lora_rank);
  m.shape.qk_nope_head_dim = if_given(a, "--qk-nope-head-dim", a.mla.qk_nope_head_dim);
  m.shape.qk_rope_head_dim = if_given(a, "--qk-rope-head-dim", a.mla.qk_rope_head_dim);
  m.shape.v_head_dim = if_given(a, "--v-head-dim", a.mla.v_head_dim);
  const PlanFlagValues& v = a.plan;
  PlanFlags& p = r.plan;
  p.world = if_given(a, "--world", a.world);
  p.tp = if_given(a, "--tp", v.tp);
  p.pp = if_given(a, "--pp", v.pp);
  p.dp = if_given(a, "--dp", a.dp);
  p.ep = if_given(a, "--ep", v.ep);
  p.etp = if_given(a, "--etp", v.etp);
  p.cp = if_given(a, "--cp", v.cp);
  p.cp_comm_type = if_given(a, "--cp-comm-type", v.cp_comm_type);
  p.sp = if_given(a, "--sp", v.sp);
  p.zero = if_given(a, "--zero", v.zero);
  p.recompute = if_given(a, "--recompute", v.recompute);
  p.optimizer = if_given(a, "--optimizer", v.optimizer);
  p.offload_optimizer = if_given(a, "--offload-optimizer", v.offload_optimizer);
  p.offload_params = if_given(a, "--offload-params", v.offload_params);
  p.offload_activations = if_given(a, "--offload-activations", v.offload_activations);
  p.lora_rank = if_given(a, "--lora-rank", v.lora_rank);
  p.lora_base_bits = if_given(a, "--lora-base-bits", v.lora_base_bits);
  p.lora_targets = if_given(a, "--lora-targets", v.lora_targets);
  p.fp8 = if_given(a, "--fp8", v.fp8);
  p.fp8_dispatch = if_given(a, "--fp8-dispatch", v.fp8_dispatch);
  p.flash_attention = if_given(a, "--flash-attn", v.flash_attention);
  p.kernels = if_given(a, "--kernels", v.kernels);
  p.micro_batch = if_given(a, "--micro-batch", v.micro_batch);
  p.global_batch = if_given(a, "--global-batch", a.global_batch);
  p.schedule = if_given(a, "--schedule", v.schedule);
  p.chunks = if_given(a, "--chunks", v.chunks);
  p.order = if_given(a, "--order", v.order);
  p.bucket_mib = if_given(a, "--bucket-mb", v.bucket_mib);
  p.first_stage_layers = if_given(a, "--first-stage-layers", a.first_stage_layers);
  p.last_stage_layers = if_given(a, "--last-stage-layers", a.last_stage_layers);
  p.framework = if_named(a.framework);
  r.megatron = megatron_flags(a.megatron, a.command);
  r.plan_file = a.loaded_plan;
  r.default_framework = a.default_framework;
  return r;
}

}  // namespace commscale

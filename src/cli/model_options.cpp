#include "cli/model_options.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "cli/number_options.hpp"
#include "core/error.hpp"
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
  cmd.add_option("--model", a->model, "a preset: " + preset_names())->group(group);
  cmd.add_option("--model-file", a->model_file,
                 "a model as JSON (keys: layers, hidden, heads, kv_heads, ffn, vocab, "
                 "seq, activation, norm, positions, linear_bias, tied_embeddings, dtype)")
      ->group(group);
  auto& g = a->given;
  g.layers = cmd.add_option("--layers", a->layers, "transformer layers (overrides the preset or file)")->group(group);
  g.hidden = cmd.add_option("--hidden", a->hidden, "hidden size")->group(group);
  g.heads = cmd.add_option("--heads", a->heads, "attention heads")->group(group);
  g.kv_heads = cmd.add_option("--kv-heads", a->kv_heads, "KV heads, fewer than --heads for GQA (default: --heads)")
                   ->group(group);
  g.ffn = cmd.add_option("--ffn", a->ffn, "MLP inner size (default 4 x hidden; required with swiglu)")->group(group);
  g.vocab =
      cmd.add_option("--vocab", a->vocab, "vocabulary size; 0: a bare stack of blocks, no embedding, logits or loss")
          ->group(group);
  g.seq = cmd.add_option("--seq", a->seq, "sequence length")->group(group);
  g.activation = cmd.add_option("--activation", a->activation, "gelu or swiglu")->group(group);
  g.dtype = cmd.add_option("--dtype", a->dtype, "training type: bf16 (default), fp16 or fp32")->group(group);
}

void add_plan_options(CLI::App& cmd, ModelPlanArguments* a) {
  const std::string group = "Parallel plan";
  a->given.world = cmd.add_option("--world", a->world, "ranks (GPUs) in the job (default: dp x tp x pp)")->group(group);
  cmd.add_option("--tp", a->tp, "tensor-parallel size")->capture_default_str()->group(group);
  cmd.add_option("--pp", a->pp, "pipeline-parallel size (stages)")->capture_default_str()->group(group);
  a->given.dp = cmd.add_option("--dp", a->dp, "data-parallel size (default: world / (tp x pp))")->group(group);
  cmd.add_flag("--sp", a->sp, "sequence parallelism (with --tp 2 or more)")->group(group);
  cmd.add_option("--zero", a->zero, "ZeRO stage 0, 1, 2 or 3")->capture_default_str()->group(group);
  cmd.add_option("--recompute", a->recompute, "activation recompute: none, selective or full")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--optimizer", a->optimizer,
                 "the step's optimizer: adam (mixed precision, fp32 master weights and moments), adamw (PyTorch's "
                 "AdamW on the weights' own type), sgd (no state) or none (forward and backward only)")
      ->capture_default_str()
      ->group(group);
  cmd.add_flag("--flash-attn", a->flash_attention, "fused (flash) attention")->group(group);
  cmd.add_option("--kernels", a->kernels,
                 "memory-bound kernels: fused (Megatron-LM's) or eager (PyTorch's, one per tensor operation, "
                 "with gradient accumulation by adds)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--micro-batch", a->micro_batch, "sequences per microbatch")->capture_default_str()->group(group);
  cmd.add_option(
         "--global-batch", a->global_batch,
         "sequences per step over all replicas (default: 4 microbatches per pipeline stage, 1 without a pipeline)")
      ->group(group);
  cmd.add_option("--schedule", a->schedule, "pipeline schedule: gpipe, 1f1b or interleaved")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--chunks", a->chunks, "model chunks per stage with --schedule interleaved")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--order", a->order, "rank layout, fastest-varying first: tp-dp-pp keeps tp ranks adjacent (one node)")
      ->capture_default_str()
      ->group(group);
  add_real_option(cmd, "--bucket-mb", &a->bucket_mib, "data-parallel gradient bucket, MiB",
                  {0.0, 1e6, "a positive size in MiB, at most 1000000", "", true})
      ->capture_default_str()
      ->group(group);
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
  return resolve_model(a.model, a.model_file, o);
}

// --world and --dp: either may be left out and follows from the other.
int data_parallel_size(const ModelPlanArguments& a, int* world) {
  const bool world_given = a.given.world != nullptr && a.given.world->count() > 0;
  const bool dp_given = a.given.dp != nullptr && a.given.dp->count() > 0;
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

TransformerConfig finish_model_options(const ModelPlanArguments& args) { return resolve(args); }

void add_model_plan_options(CLI::App& command, ModelPlanArguments* args) {
  model_flags(command, args);
  add_plan_options(command, args);
}

CheckedPlan finish_model_plan_options(const ModelPlanArguments& a) {
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
  p.flash_attention = a.flash_attention;
  p.kernels = parse_kernel_set(a.kernels, "--kernels");
  p.micro_batch = a.micro_batch;
  p.schedule = parse_schedule(a.schedule, "--schedule");
  p.chunks = a.chunks;
  p.order = a.order;
  p.global_batch = a.global_batch != 0 ? a.global_batch : p.dp * p.micro_batch * (p.pp > 1 ? 4 * p.pp : 1);
  p.bucket_bytes = Bytes(static_cast<std::uint64_t>(std::llround(a.bucket_mib * static_cast<double>(kMiB))));
  return CheckedPlan(std::move(model), std::move(p), world);
}

}  // namespace commscale

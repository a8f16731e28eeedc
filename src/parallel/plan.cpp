#include "parallel/plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "parallel/rank_layout.hpp"

namespace commscale {
namespace {

void require_at_least(std::int64_t value, std::int64_t minimum, std::string_view flag) {
  if (value < minimum)
    throw InputError(flag, fmt::format("{} is too small", value), fmt::format("at least {}", minimum));
}

void require_at_most(std::int64_t value, std::int64_t maximum, std::string_view flag) {
  if (value > maximum)
    throw InputError(flag, fmt::format("{} is too large", value), fmt::format("at most {}", maximum));
}

void require_divides(int tp, std::int64_t total, std::string_view what) {
  if (total % tp != 0) {
    throw InputError("--tp", fmt::format("{} does not divide the {} {}", tp, total, what),
                     fmt::format("a tensor-parallel size that divides the {}", what));
  }
}

void validate_tensor_parallel(const TransformerConfig& m, const ParallelPlan& p) {
  require_divides(p.tp, m.heads, "attention heads");
  require_divides(p.tp, m.kv_heads, "KV heads");
  require_divides(p.tp, m.ffn, "MLP size (--ffn)");
  if (!p.sequence_parallel) return;
  if (p.tp == 1) throw InputError("--sp", "sequence parallelism splits across tensor-parallel ranks", "--tp 2 or more");
  if (m.seq % p.tp != 0) {
    throw InputError("--sp", fmt::format("tp {} does not divide the sequence length {}", p.tp, m.seq),
                     "a sequence length that is a multiple of --tp");
  }
}

// Layers of each stage between the first and the last with uneven end stages (0 when there is none).
int middle_stage_layers(const TransformerConfig& m, const ParallelPlan& p) noexcept {
  const int ends = (p.first_stage_layers > 0 ? 1 : 0) + (p.last_stage_layers > 0 ? 1 : 0);
  const int stages = p.pp - ends;
  return stages > 0 ? (m.layers - p.first_stage_layers - p.last_stage_layers) / stages : 0;
}

// End stages around stages of k layers each, k as near layers / pp as leaves both ends at least one layer:
// the rest split between them, the first taking the odd one (126 on pp 16: 7, 8 x 14, 7; 127: 8, 8 x 14, 7).
std::string uneven_split_hint(int layers, int pp) {
  for (int k = (layers + pp - 1) / pp; k >= 1; --k) {
    const int rest = layers - k * (pp - 2);
    if (rest < 2) continue;
    return fmt::format("--first-stage-layers {} --last-stage-layers {} ({} a stage between)", (rest + 1) / 2, rest / 2,
                       k);
  }
  return "none splits these layers";
}

void validate_uneven_stages(const TransformerConfig& m, const ParallelPlan& p) {
  const char* flag = p.first_stage_layers > 0 ? "--first-stage-layers" : "--last-stage-layers";
  if (p.first_stage_layers < 0 || p.last_stage_layers < 0) {
    throw InputError(p.first_stage_layers < 0 ? "--first-stage-layers" : "--last-stage-layers", "is negative",
                     "0 (as many as the other stages) or more");
  }
  if (p.pp < 2) throw InputError(flag, fmt::format("given with pp {}", p.pp), "a pipeline of 2 stages or more");
  if (p.chunks > 1) {
    throw InputError(flag, fmt::format("given with {} chunks per stage", p.chunks),
                     "uneven end stages without interleaving (--chunks 1)");
  }
  const int ends = (p.first_stage_layers > 0 ? 1 : 0) + (p.last_stage_layers > 0 ? 1 : 0);
  const int stages = p.pp - ends;
  const int rest = m.layers - p.first_stage_layers - p.last_stage_layers;
  if (rest < 0 || (stages == 0 && rest != 0) || (stages > 0 && (rest < stages || rest % stages != 0))) {
    throw InputError(flag,
                     fmt::format("{} and {} layers on the end stages leave {} of {} layers for {} stage(s)",
                                 p.first_stage_layers, p.last_stage_layers, rest, m.layers, stages),
                     "end stages that leave every stage between them the same number of layers, at least 1");
  }
}

void validate_schedule(const TransformerConfig& m, const ParallelPlan& p) {
  require_at_least(p.chunks, 1, "--chunks");
  require_at_most(p.chunks, kMaxLayers, "--chunks");
  if (p.schedule == ScheduleKind::kInterleaved) {
    if (p.pp < 2) throw InputError("--schedule", "interleaved needs a pipeline", "--pp 2 or more");
    if (p.chunks < 2)
      throw InputError("--chunks", fmt::format("{} chunk per stage", p.chunks), "2 or more with interleaved");
    const int m_steps = microbatches_per_step(p);
    if (m_steps % p.pp != 0) {
      throw InputError("--global-batch",
                       fmt::format("{} microbatches per step are not a multiple of pp {}", m_steps, p.pp),
                       "with interleaved, global batch / (dp * micro-batch) a multiple of --pp");
    }
  } else if (p.chunks != 1) {
    throw InputError("--chunks", fmt::format("{} chunks per stage with {}", p.chunks, name(p.schedule)),
                     "1, or --schedule interleaved");
  }
  if (uneven_stages(p)) {
    validate_uneven_stages(m, p);
  } else if (m.layers % (p.pp * p.chunks) != 0) {
    throw InputError("--pp", fmt::format("{} layers do not split into pp {} x {} chunks", m.layers, p.pp, p.chunks),
                     p.chunks == 1 && p.pp > 2 ? fmt::format("a layer count divisible by pp, or uneven end stages: {}",
                                                             uneven_split_hint(m.layers, p.pp))
                                               : "a layer count divisible by pp * chunks");
  }
}

}  // namespace

LayerRange virtual_stage_layers(const TransformerConfig& m, const ParallelPlan& p, int virtual_stage) {
  if (!uneven_stages(p)) {
    const int per_chunk = layers_per_chunk(m, p);
    return {virtual_stage * per_chunk, per_chunk};
  }
  const int middle = middle_stage_layers(m, p);
  const int first = p.first_stage_layers > 0 ? p.first_stage_layers : middle;
  if (virtual_stage == 0) return {0, first};
  if (virtual_stage == p.pp - 1)
    return {m.layers - (p.last_stage_layers > 0 ? p.last_stage_layers : middle),
            p.last_stage_layers > 0 ? p.last_stage_layers : middle};
  return {first + (virtual_stage - 1) * middle, middle};
}

int stage_layers(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  if (!uneven_stages(p)) return layers_per_chunk(m, p) * p.chunks;
  return virtual_stage_layers(m, p, stage).count;
}

int most_stage_layers(const TransformerConfig& m, const ParallelPlan& p) {
  int most = 0;
  for (int stage = 0; stage < p.pp; ++stage) most = std::max(most, stage_layers(m, p, stage));
  return most;
}

std::string stage_split_text(const TransformerConfig& m, const ParallelPlan& p) {
  if (!uneven_stages(p)) return "";
  if (p.pp == 2) return fmt::format(" with stages of {} and {} layers", stage_layers(m, p, 0), stage_layers(m, p, 1));
  return fmt::format(" with stages of {}, {} (x{}) and {} layers", stage_layers(m, p, 0), stage_layers(m, p, 1),
                     p.pp - 2, stage_layers(m, p, p.pp - 1));
}

std::string memory_saving_text(const ParallelPlan& p) {
  const bool offload =
      p.offload_optimizer != OffloadDevice::kNone || p.offload_params != OffloadDevice::kNone || p.offload_activations;
  if (!offload && !p.lora.enabled() && p.optimizer != Optimizer::kAdam8bit) return "";
  std::string out = fmt::format("optimizer {}", name(p.optimizer));
  if (p.lora.enabled()) {
    out += fmt::format("; LoRA r {} on {}, {} base", p.lora.rank, name(p.lora.targets),
                       p.lora.base_bits == 4 ? "NF4" : "16-bit");
  }
  std::vector<std::string> offloaded;
  if (p.offload_optimizer != OffloadDevice::kNone) offloaded.emplace_back("optimizer");
  if (p.offload_params != OffloadDevice::kNone) offloaded.emplace_back("parameters");
  if (p.offload_activations) offloaded.emplace_back("activations");
  if (!offloaded.empty()) out += fmt::format("; offload: {} to the host", fmt::join(offloaded, ", "));
  return out;
}

std::string experts_plan_text(const TransformerConfig& m, const ParallelPlan& p) {
  if (!m.moe.enabled()) return "";
  const int local = m.moe.experts / p.ep;
  const std::string sharded = p.etp > 1 ? fmt::format(", each split over expert tensor parallel {}", p.etp) : "";
  return fmt::format("{}; ep {}: {} expert{} per rank{}, expert data parallel {}", experts_text(m), p.ep, local,
                     local == 1 ? "" : "s", sharded, expert_dp(p));
}

LayerSharding layer_sharding(const ParallelPlan& p) noexcept {
  LayerSharding s;
  s.micro_batch = p.micro_batch;
  s.tp = p.tp;
  s.sequence_parallel = p.sequence_parallel;
  s.flash_attention = p.flash_attention;
  s.recompute = p.recompute;
  s.kernels = p.kernels;
  s.lora = p.lora;
  s.ep = p.ep;
  s.etp = p.etp;
  s.fp8 = p.fp8;
  s.fp8_dispatch = p.fp8_dispatch;
  s.cp = p.cp;
  s.cp_comm = p.cp_comm;
  if (p.framework == Framework::kMegatronDeepSpeed) {
    s.grad_accumulation = GradAccumulation::kDeepSpeed;
  } else if (p.framework == Framework::kMegatronLm && !p.gradient_accumulation_fusion) {
    s.grad_accumulation = GradAccumulation::kMainGradAdd;
  }
  return s;
}

int checked_world_size(int dp, int tp, int pp, int cp) {
  require_at_least(tp, 1, "--tp");
  require_at_least(pp, 1, "--pp");
  require_at_least(dp, 1, "--dp");
  require_at_least(cp, 1, "--cp");
  require_at_most(tp, kMaxRanks, "--tp");
  require_at_most(pp, kMaxRanks, "--pp");
  require_at_most(dp, kMaxRanks, "--dp");
  require_at_most(cp, kMaxRanks, "--cp");
  const std::int64_t world = std::int64_t{dp} * tp * pp * cp;
  if (world > kMaxRanks) {
    if (cp > 1) {
      throw InputError("--dp/--tp/--pp/--cp",
                       fmt::format("dp {} x tp {} x pp {} x cp {} = {} ranks", dp, tp, pp, cp, world),
                       fmt::format("at most {} ranks", kMaxRanks));
    }
    throw InputError("--dp/--tp/--pp", fmt::format("dp {} x tp {} x pp {} = {} ranks", dp, tp, pp, world),
                     fmt::format("at most {} ranks", kMaxRanks));
  }
  return static_cast<int>(world);
}

std::string context_parallel_text(const TransformerConfig& m, const ParallelPlan& p) {
  if (p.cp == 1) return "";
  return fmt::format("cp {} ({}): {} of {} tokens of each sequence per rank", p.cp, name(p.cp_comm), m.seq / p.cp,
                     m.seq);
}

namespace {

// DeepSpeed's rules: the optimizer offloads with a ZeRO stage (the partition the CPU updates), parameters only
// with stage 3 (what is offloaded is ZeRO-3's shard), and offloading parameters offloads the optimizer too.
void validate_offload(const ParallelPlan& p) {
  const bool optimizer = p.offload_optimizer != OffloadDevice::kNone;
  if (optimizer && p.zero_stage == 0) {
    throw InputError("--offload-optimizer", "cpu with --zero 0",
                     "--zero 1, 2 or 3: ZeRO-Offload updates this rank's partition of the optimizer state");
  }
  if (optimizer && (p.optimizer == Optimizer::kNone || p.optimizer == Optimizer::kSgd)) {
    throw InputError("--offload-optimizer", fmt::format("cpu with --optimizer {}", name(p.optimizer)),
                     "an optimizer with state to offload: adam, adamw or adam8bit");
  }
  if (p.offload_params != OffloadDevice::kNone) {
    if (p.zero_stage != 3) {
      throw InputError("--offload-params", fmt::format("cpu with --zero {}", p.zero_stage),
                       "--zero 3: ZeRO-Infinity offloads ZeRO-3's parameter shards");
    }
    if (!optimizer) {
      throw InputError("--offload-params", "cpu without --offload-optimizer cpu",
                       "--offload-optimizer cpu too (the update runs where the fp32 state is)");
    }
  }
}

// LoRA as modelled (workload/lora.hpp): a rank from 1 to the hidden size, a 16-bit or NF4 base, without tensor
// parallelism (adapters split over tp ranks are not modelled), ZeRO-3 (FSDP's sharded frozen base) or eager
// kernels.
void validate_lora(const TransformerConfig& m, const ParallelPlan& p) {
  const LoraSpec& l = p.lora;
  if (l.base_bits != 16 && l.base_bits != 4) {
    throw InputError("--lora-base-bits", fmt::format("{}", l.base_bits), "16 (the model's dtype) or 4 (QLoRA's NF4)");
  }
  if (l.rank < 0 || l.rank > m.hidden) {
    throw InputError("--lora-rank", fmt::format("{}", l.rank),
                     fmt::format("0 (no LoRA) to the hidden size {}", m.hidden));
  }
  if (!l.enabled()) {
    if (l.base_bits != 16) throw InputError("--lora-base-bits", "4 without --lora-rank", "a --lora-rank of 1 or more");
    return;
  }
  if (p.tp > 1) {
    throw InputError("--lora-rank", fmt::format("{} with --tp {}", l.rank, p.tp),
                     "--tp 1: LoRA is modelled without tensor parallelism");
  }
  if (p.zero_stage == 3) {
    throw InputError("--lora-rank", fmt::format("{} with --zero 3", l.rank),
                     "--zero 0, 1 or 2: a ZeRO-3-sharded frozen base is not modelled");
  }
  if (p.kernels == KernelSet::kEager) {
    throw InputError("--lora-rank", fmt::format("{} with --kernels eager", l.rank), "--kernels fused");
  }
  if (p.fp8 != Fp8Recipe::kNone) {  // TransformerEngine's FP8 modules with adapters: not modelled (src/predict/FP8.md)
    throw InputError("--fp8", fmt::format("{} with --lora-rank {}", name(p.fp8), l.rank), "--fp8 none with LoRA");
  }
}

}  // namespace

void validate_fp8_dispatch(const TransformerConfig& m, Fp8Recipe fp8, bool fp8_dispatch) {
  if (!fp8_dispatch) return;
  if (fp8 == Fp8Recipe::kNone) {
    throw InputError("--fp8-dispatch", "without --fp8", "--fp8 delayed, current or block with --fp8-dispatch");
  }
  if (!m.moe.enabled()) {
    throw InputError("--fp8-dispatch", fmt::format("for {}, which has no experts", m.name), "a model with experts");
  }
}

void validate_expert_tensor_parallel(const TransformerConfig& m, int etp, Fp8Recipe fp8) {
  if (etp <= 1) return;
  if (!m.moe.enabled()) {
    throw InputError("--etp", fmt::format("{} for {}, which has no experts", etp, m.name),
                     "1, or a model with experts (--model mixtral-8x7b, --experts)");
  }
  if (m.moe.expert_ffn % etp != 0) {
    throw InputError("--etp", fmt::format("{} does not divide the experts' F {}", etp, m.moe.expert_ffn),
                     "a divisor of the experts' inner size (--expert-ffn)");
  }
  if (m.linear_bias) {
    throw InputError("--etp", fmt::format("{} for {}, whose linear layers have biases", etp, m.name),
                     "1: Megatron-Core supports biases in MoE layers only with expert tensor parallelism 1");
  }
  if (fp8 != Fp8Recipe::kNone) {
    throw InputError("--etp", fmt::format("{} with --fp8 {}", etp, name(fp8)),
                     "1 with FP8: FP8 experts with expert tensor parallelism are not modelled (MOE.md)");
  }
}

void validate_context_options(const ParallelPlan& p) {
  if (p.cp <= 1) return;
  const auto refuse = [&](std::string_view flag, std::string what) {
    throw InputError(flag, fmt::format("{} with --cp {}", what, p.cp),
                     "not modelled with context parallelism (src/workload/CONTEXT_PARALLEL.md)");
  };
  if (!p.flash_attention) {
    throw InputError("--flash-attn", fmt::format("off with --cp {}", p.cp),
                     "--flash-attn: context parallelism runs TransformerEngine's fused attention");
  }
  if (p.kernels == KernelSet::kEager) refuse("--kernels", "eager");
  if (p.lora.enabled()) refuse("--lora-rank", "LoRA");
  if (p.offload_optimizer != OffloadDevice::kNone) refuse("--offload-optimizer", "optimizer offload");
  if (p.offload_params != OffloadDevice::kNone) refuse("--offload-params", "parameter offload");
  if (p.offload_activations) refuse("--offload-activations", "activation offload");
}

namespace {

// Expert parallelism and what an MoE model is run with (MOE.md): Megatron-Core's alltoall dispatcher, fused
// kernels, sequence parallelism with tp > 1 (Megatron-Core requires it), expert tensor parallelism with
// Megatron-Core's limits (no biases) and without FP8 (not modelled with it).
void validate_experts(const TransformerConfig& m, const ParallelPlan& p) {
  if (p.ep < 1) throw InputError("--ep", fmt::format("{}", p.ep), "1 or more expert-parallel ranks");
  if (p.etp < 1) throw InputError("--etp", fmt::format("{}", p.etp), "1 or more expert-tensor-parallel ranks");
  if (!m.moe.enabled()) {
    if (p.ep > 1) {
      throw InputError("--ep", fmt::format("{} for {}, which has no experts", p.ep, m.name),
                       "1, or a model with experts (--model mixtral-8x7b, --experts)");
    }
    if (p.etp > 1) {
      throw InputError("--etp", fmt::format("{} for {}, which has no experts", p.etp, m.name),
                       "1, or a model with experts (--model mixtral-8x7b, --experts)");
    }
    return;
  }
  if (m.moe.experts % p.ep != 0) {
    throw InputError("--ep", fmt::format("{} does not divide the {} experts", p.ep, m.moe.experts),
                     "a divisor of the experts");
  }
  // The dense ranks of a stage, which the experts' layout regroups (ExpertLayout): tp x cp x dp.
  const std::int64_t stage_ranks = std::int64_t{p.tp} * p.cp * p.dp;
  const std::string dense =
      p.cp > 1 ? fmt::format("tp {} x cp {} x dp {}", p.tp, p.cp, p.dp) : fmt::format("tp {} x dp {}", p.tp, p.dp);
  const std::string_view dense_name = p.cp > 1 ? "tp x cp x dp" : "tp x dp";
  if (stage_ranks % p.ep != 0) {
    throw InputError("--ep", fmt::format("{} does not divide {}", p.ep, dense),
                     fmt::format("a divisor of {}: expert-parallel ranks are folded onto a stage's ranks", dense_name));
  }
  if (stage_ranks % (std::int64_t{p.etp} * p.ep) != 0) {
    throw InputError("--etp", fmt::format("{} x ep {} does not divide {}", p.etp, p.ep, dense),
                     fmt::format("an expert-tensor-parallel size whose product with --ep divides {}", dense_name));
  }
  validate_expert_tensor_parallel(m, p.etp, p.fp8);
  if (p.tp > 1 && !p.sequence_parallel) {
    throw InputError("--sp", fmt::format("off with tp {} for {}", p.tp, m.name),
                     "--sp: Megatron-Core runs MoE layers with tensor parallelism only with sequence parallelism");
  }
  const auto refuse = [&](std::string_view flag, std::string what) {
    throw InputError(flag, fmt::format("{} with a mixture-of-experts model ({})", what, m.name),
                     "not modelled for MoE yet (src/workload/MOE.md)");
  };
  if (p.zero_stage == 3) refuse("--zero", "stage 3");
  if (p.kernels == KernelSet::kEager) refuse("--kernels", "eager");
  if (p.lora.enabled()) refuse("--lora-rank", "LoRA");
  if (p.offload_optimizer != OffloadDevice::kNone) refuse("--offload-optimizer", "optimizer offload");
  if (p.offload_params != OffloadDevice::kNone) refuse("--offload-params", "parameter offload");
  if (p.offload_activations) refuse("--offload-activations", "activation offload");
  (void)ExpertLayout(p.tp, p.dp, p.pp, p.ep, p.order, p.etp, p.cp);  // checks that --order keeps experts in their stage
}

}  // namespace

namespace {

// Context parallelism as modelled (CONTEXT_PARALLEL.md): a sequence that splits into 2 cp equal chunks
// (Megatron-Core's load-balanced causal split), TransformerEngine's fused attention; with experts each cp rank
// routes its own tokens (MOE.md). What is not modelled with it is refused naming its flag.
void validate_context(const TransformerConfig& m, const ParallelPlan& p) {
  if (p.cp == 1) {
    if (p.cp_comm != CpCommType::kP2p) {
      throw InputError("--cp-comm-type", fmt::format("{} with --cp 1", name(p.cp_comm)),
                       "--cp 2 or more: it says how context-parallel ranks exchange keys and values");
    }
    return;
  }
  if (m.seq % (2 * std::int64_t{p.cp}) != 0) {
    throw InputError("--cp",
                     fmt::format("{}: the sequence of {} tokens does not split into 2 x {} chunks", p.cp, m.seq, p.cp),
                     "a cp for which 2 x cp divides the sequence length (--seq)");
  }
  validate_context_options(p);
}

// Multi-head latent attention (src/workload/MLA.md) is modelled as Megatron-Core runs it with fused kernels;
// what commscale has not written its op lists for is refused naming its flag.
void validate_latent_attention(const TransformerConfig& m, const ParallelPlan& p) {
  if (!m.mla.enabled()) return;
  const auto refuse = [&](std::string_view flag, std::string what) {
    throw InputError(flag, fmt::format("{} with multi-head latent attention ({})", what, m.name),
                     "not modelled with MLA yet (src/workload/MLA.md)");
  };
  if (p.kernels == KernelSet::kEager) refuse("--kernels", "eager");
  if (p.lora.enabled()) refuse("--lora-rank", "LoRA");
}

}  // namespace

void validate_plan(const TransformerConfig& m, const ParallelPlan& p, int world) {
  if (checked_world_size(p.dp, p.tp, p.pp, p.cp) != world) {
    if (p.cp > 1) {
      throw InputError(
          "--world",
          fmt::format("dp {} x tp {} x pp {} x cp {} = {} ranks, not {}", p.dp, p.tp, p.pp, p.cp, world_size(p), world),
          "world = dp * tp * pp * cp");
    }
    throw InputError("--world",
                     fmt::format("dp {} x tp {} x pp {} = {} ranks, not {}", p.dp, p.tp, p.pp, world_size(p), world),
                     "world = dp * tp * pp");
  }
  (void)RankLayout(p.tp, p.dp, p.pp, p.order, p.cp);  // checks --order
  validate_context(m, p);
  validate_latent_attention(m, p);
  validate_tensor_parallel(m, p);
  if (p.zero_stage < 0 || p.zero_stage > 3)
    throw InputError("--zero", fmt::format("stage {}", p.zero_stage), "0, 1, 2 or 3");
  if (p.zero_stage > 0 && p.optimizer == Optimizer::kNone) {
    throw InputError("--zero", fmt::format("stage {} with --optimizer none", p.zero_stage),
                     "stage 0: ZeRO shards the optimizer's update and state, and there is none");
  }
  validate_offload(p);
  validate_lora(m, p);
  validate_experts(m, p);
  validate_fp8_dispatch(m, p.fp8, p.fp8_dispatch);
  require_at_least(p.micro_batch, 1, "--micro-batch");
  require_at_most(p.micro_batch, kMaxMicroBatch, "--micro-batch");
  require_at_least(p.global_batch, 1, "--global-batch");
  if (p.global_batch % (std::int64_t{p.dp} * p.micro_batch) != 0) {
    throw InputError("--global-batch",
                     fmt::format("{} is not a multiple of dp {} x micro-batch {} = {}", p.global_batch, p.dp,
                                 p.micro_batch, std::int64_t{p.dp} * p.micro_batch),
                     "a multiple of dp * micro-batch");
  }
  validate_schedule(m, p);
  // The step program has ops for every layer pass of every microbatch: bound it before building it.
  const int per_stage = most_stage_layers(m, p);
  const std::int64_t passes = std::int64_t{microbatches_per_step(p)} * per_stage;
  if (passes > kMaxLayerPasses) {
    throw InputError("--global-batch",
                     fmt::format("{} microbatches per step x {} layers per stage = {} layer passes per rank",
                                 microbatches_per_step(p), per_stage, passes),
                     fmt::format("at most {}: a smaller global batch, or more pipeline stages", kMaxLayerPasses));
  }
  if (p.bucket_bytes.count() == 0) throw InputError("--bucket-mb", "a bucket of 0 bytes", "a positive size in MiB");
}

CheckedPlan::CheckedPlan(TransformerConfig model, ParallelPlan plan, int world)
    : model_(std::move(model)), plan_(std::move(plan)) {
  validate_plan(model_, plan_, world);
}

CheckedPlan::CheckedPlan(TransformerConfig model, ParallelPlan plan)
    : CheckedPlan(std::move(model), plan, checked_world_size(plan.dp, plan.tp, plan.pp, plan.cp)) {}

nlohmann::json plan_to_json(const ParallelPlan& p) {
  nlohmann::json out = {{"dp", p.dp},
                        {"tp", p.tp},
                        {"pp", p.pp},
                        {"sequence_parallel", p.sequence_parallel},
                        {"zero_stage", p.zero_stage},
                        {"recompute", name(p.recompute)},
                        {"optimizer", name(p.optimizer)},
                        {"flash_attention", p.flash_attention},
                        {"kernels", name(p.kernels)},
                        {"micro_batch", p.micro_batch},
                        {"global_batch", p.global_batch},
                        {"microbatches_per_step", microbatches_per_step(p)},
                        {"schedule", name(p.schedule)},
                        {"chunks", p.chunks},
                        {"order", p.order},
                        {"bucket_bytes", p.bucket_bytes.count()},
                        {"overlap_grad_reduce", p.overlap_grad_reduce},
                        {"framework", name(p.framework)}};
  if (!p.gradient_accumulation_fusion) out["gradient_accumulation_fusion"] = false;  // only where off, as below
  if (uneven_stages(p)) {  // only where the split is uneven: an even plan's JSON is as before
    out["first_stage_layers"] = p.first_stage_layers;
    out["last_stage_layers"] = p.last_stage_layers;
  }
  // Memory-saving options only where set: a plan without them reads as before.
  if (p.offload_optimizer != OffloadDevice::kNone) out["offload_optimizer"] = name(p.offload_optimizer);
  if (p.offload_params != OffloadDevice::kNone) out["offload_params"] = name(p.offload_params);
  if (p.offload_activations) out["offload_activations"] = true;
  if (p.ep != 1) out["ep"] = p.ep;
  if (p.etp != 1) out["etp"] = p.etp;  // only with expert tensor parallelism: a plan without it reads as before
  if (p.cp != 1) {                     // only with context parallelism: a plan without it reads as before
    out["cp"] = p.cp;
    out["cp_comm_type"] = name(p.cp_comm);
  }
  if (p.lora.enabled()) {
    out["lora_rank"] = p.lora.rank;
    out["lora_base_bits"] = p.lora.base_bits;
    out["lora_targets"] = name(p.lora.targets);
  }
  if (p.fp8 != Fp8Recipe::kNone) out["fp8"] = name(p.fp8);  // only with FP8: a plan without reads as before
  if (p.fp8_dispatch) out["fp8_dispatch"] = true;
  return out;
}

namespace {

// A whole number of at least `minimum` at in[key], or `fallback` when absent or null.
int whole_or(const JsonAt& in, std::string_view key, int fallback, int minimum) {
  const std::optional<double> v = in.optional_number(key);
  if (!v) return fallback;
  if (*v != std::floor(*v) || *v < minimum || *v > kMaxRanks * 1024.0) {
    throw InputError(in.at(key).where(), fmt::format("is {}", in.at(key).value().dump()),
                     fmt::format("a whole number of {} or more", minimum));
  }
  return static_cast<int>(*v);
}

}  // namespace

ParallelPlan plan_from_json(const JsonAt& in) {
  ParallelPlan p;
  p.dp = whole_or(in, "dp", p.dp, 1);
  p.tp = whole_or(in, "tp", p.tp, 1);
  p.pp = whole_or(in, "pp", p.pp, 1);
  p.sequence_parallel = in.flag_or("sequence_parallel", p.sequence_parallel);
  p.zero_stage = whole_or(in, "zero_stage", p.zero_stage, 0);
  if (in.has("recompute")) p.recompute = parse_recompute(in.string("recompute"), in.at("recompute").where());
  if (in.has("optimizer")) p.optimizer = parse_optimizer(in.string("optimizer"), in.at("optimizer").where());
  p.flash_attention = in.flag_or("flash_attention", p.flash_attention);
  if (in.has("kernels")) p.kernels = parse_kernel_set(in.string("kernels"), in.at("kernels").where());
  p.micro_batch = whole_or(in, "micro_batch", p.micro_batch, 1);
  p.global_batch = whole_or(in, "global_batch", p.global_batch, 1);
  if (in.has("schedule")) p.schedule = parse_schedule(in.string("schedule"), in.at("schedule").where());
  p.chunks = whole_or(in, "chunks", p.chunks, 1);
  p.order = in.string_or("order", p.order);
  if (in.has("bucket_bytes")) {
    const double bytes = in.number("bucket_bytes");
    if (bytes < 0 || bytes != std::floor(bytes))
      throw InputError(in.at("bucket_bytes").where(), fmt::format("is {}", bytes), "a whole number of bytes");
    p.bucket_bytes = Bytes(static_cast<std::uint64_t>(bytes));
  }
  p.overlap_grad_reduce = in.flag_or("overlap_grad_reduce", p.overlap_grad_reduce);
  p.gradient_accumulation_fusion = in.flag_or("gradient_accumulation_fusion", p.gradient_accumulation_fusion);
  p.first_stage_layers = whole_or(in, "first_stage_layers", p.first_stage_layers, 0);
  p.last_stage_layers = whole_or(in, "last_stage_layers", p.last_stage_layers, 0);
  if (in.has("framework")) p.framework = parse_framework(in.string("framework"), in.at("framework").where());
  if (in.has("offload_optimizer")) {
    p.offload_optimizer = parse_offload_device(in.string("offload_optimizer"), in.at("offload_optimizer").where());
  }
  if (in.has("offload_params")) {
    p.offload_params = parse_offload_device(in.string("offload_params"), in.at("offload_params").where());
  }
  p.offload_activations = in.flag_or("offload_activations", p.offload_activations);
  p.ep = whole_or(in, "ep", p.ep, 1);
  p.etp = whole_or(in, "etp", p.etp, 1);
  p.cp = whole_or(in, "cp", p.cp, 1);
  if (in.has("cp_comm_type")) p.cp_comm = parse_cp_comm_type(in.string("cp_comm_type"), in.at("cp_comm_type").where());
  p.lora.rank = whole_or(in, "lora_rank", p.lora.rank, 0);
  p.lora.base_bits = whole_or(in, "lora_base_bits", p.lora.base_bits, 4);
  if (in.has("lora_targets"))
    p.lora.targets = parse_lora_targets(in.string("lora_targets"), in.at("lora_targets").where());
  if (in.has("fp8")) p.fp8 = parse_fp8_recipe(in.string("fp8"), in.at("fp8").where());
  p.fp8_dispatch = in.flag_or("fp8_dispatch", p.fp8_dispatch);
  return p;
}

}  // namespace commscale

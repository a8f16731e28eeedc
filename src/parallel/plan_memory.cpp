#include "parallel/plan_memory.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "parallel/schedule.hpp"
#include "workload/fp8_ops.hpp"
#include "workload/lora.hpp"
#include "workload/memory.hpp"

namespace commscale {
namespace {

bool holds_embedding(const TransformerConfig& m, int stage) { return m.vocab > 0 && stage == 0; }
bool holds_head(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  return m.vocab > 0 && stage == p.pp - 1;
}

// The largest set of parameters ZeRO-3 gathers at once on this stage: a layer, the embedding or the head.
std::uint64_t largest_gather_unit(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  std::uint64_t largest = layer_parameters(m, p.tp).total();
  if (holds_embedding(m, stage)) largest = std::max(largest, embedding_parameters(m, p.tp));
  if (holds_head(m, p, stage)) largest = std::max(largest, norm_parameters(m) + output_parameters(m, p.tp, p.pp));
  return largest;
}

// With LoRA, the base's weights, which take no gradient or optimizer state: the blocks' linear weights
// (16-bit or NF4, workload/lora.hpp), their norms and the embedding and head in the model's dtype.
Bytes frozen_weight_bytes(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  if (!p.lora.enabled()) return Bytes(0);
  const auto layers = static_cast<std::uint64_t>(stage_layers(m, p, stage));
  const std::uint64_t w = size_of(m.dtype);
  std::uint64_t others = layers * 2 * norm_parameters(m);
  if (holds_embedding(m, stage)) others += embedding_parameters(m, p.tp);
  if (holds_head(m, p, stage)) others += norm_parameters(m) + output_parameters(m, p.tp, p.pp);
  return lora_base_linear_bytes(m, p.lora) * layers + Bytes(w * others);
}

std::string gib(Bytes b) { return fmt::format("{:.1f} GiB", b.gib()); }

// How much a plan is over: in the largest unit that shows it as at least 0.1 (never "0.0 GiB").
std::string shortfall(Bytes b) {
  const double bytes = static_cast<double>(b.count());
  if (bytes >= 0.05 * kGiB) return gib(b);
  if (bytes >= 0.05 * kMiB) return fmt::format("{:.1f} MiB", bytes / kMiB);
  if (bytes >= 0.05 * kKiB) return fmt::format("{:.1f} KiB", bytes / kKiB);
  return fmt::format("{} bytes", b.count());
}

// What to try, from the largest parts of the breakdown.
std::string advice(const MemoryBreakdown& b) {
  const Bytes states = b.weights + b.gradients + b.optimizer;
  if (b.activations + b.logits > states) {
    return "activations dominate: try --recompute selective or full, --sp, --flash-attn, a smaller --micro-batch "
           "or more --tp/--pp";
  }
  return "model states dominate: try a higher --zero stage, more --dp with ZeRO, or more --tp/--pp";
}

}  // namespace

namespace {

// The sum of `of(layer_parameters)` over the stage's layers, every chunk's.
template <class Of>
std::uint64_t sum_stage_layers(const TransformerConfig& m, const ParallelPlan& p, int stage, Of of) {
  if (!m.moe.enabled()) return static_cast<std::uint64_t>(stage_layers(m, p, stage)) * of(layer_parameters(m, p.tp));
  std::uint64_t total = 0;
  for (int chunk = 0; chunk < p.chunks; ++chunk) {
    const LayerRange layers = virtual_stage_layers(m, p, chunk * p.pp + stage);
    for (int l = layers.first; l < layers.first + layers.count; ++l)
      total += of(layer_parameters(m, p.tp, l, p.ep, p.etp));
  }
  return total;
}

bool stage_has_moe_layers(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  return sum_stage_layers(m, p, stage, [](const LayerParameters& l) { return l.router; }) > 0;
}

}  // namespace

std::uint64_t stage_expert_parameters(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  return sum_stage_layers(m, p, stage, [](const LayerParameters& l) { return l.experts; });
}

std::uint64_t stage_fp8_linear_parameters(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  if (p.fp8 == Fp8Recipe::kNone) return 0;
  return sum_stage_layers(m, p, stage, [](const LayerParameters& l) { return fp8_linear_parameters(l); });
}

std::uint64_t stage_parameters(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  std::uint64_t params = sum_stage_layers(m, p, stage, [](const LayerParameters& l) { return l.total(); });
  if (holds_embedding(m, stage)) params += embedding_parameters(m, p.tp);
  if (holds_head(m, p, stage)) params += norm_parameters(m) + output_parameters(m, p.tp, p.pp);
  if (p.lora.enabled()) params += trainable_stage_parameters(m, p, stage);
  return params;
}

std::uint64_t trainable_stage_parameters(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  if (!p.lora.enabled()) return stage_parameters(m, p, stage);
  return static_cast<std::uint64_t>(stage_layers(m, p, stage)) * lora_layer_parameters(m, p.lora);
}

// Megatron-LM's mixed-precision Adam (NVIDIA/Megatron-LM docs/user-guide/features/dist_optimizer.md: 18
// bytes a parameter with bf16 parameters and fp32 gradients, 6 + 12/d with the distributed optimizer; 20 and
// 4 + 16/d in fp16): in bf16 its DDP accumulates and reduces an fp32 main_grad buffer
// (accumulate_allreduce_grads_in_fp32, as grad_sync.cpp reduces it); in fp16 the buffer is fp16 and the
// optimizer keeps an fp32 copy of its shard. Other frameworks keep the gradients in the model's type.
GradientStorage gradient_storage(const TransformerConfig& m, const ParallelPlan& p) {
  if (p.framework != Framework::kMegatronLm || p.optimizer != Optimizer::kAdam || p.lora.enabled()) return {};
  if (m.dtype == DataType::kBFloat16) return {DataType::kFloat32, false};
  if (m.dtype == DataType::kFloat16) return {std::nullopt, true};
  return {};
}

// Offload (the header's rules): moves what the plan offloads from the GPU's breakdown to the host's.
void offload(const ParallelPlan& p, Bytes layer_bytes, StageMemory& s) {
  MemoryBreakdown& gpu = s.bytes;
  if (p.offload_optimizer != OffloadDevice::kNone) {
    const std::uint64_t dp = static_cast<std::uint64_t>(grad_ranks(p));
    const std::uint64_t partition = (s.trainable + dp - 1) / dp;  // ZeRO 1 or more (validate_plan)
    s.host.optimizer = gpu.optimizer;
    s.host.gradients = Bytes(4 * partition);
    gpu.optimizer = Bytes(0);
    if (p.zero_stage >= 2) gpu.gradients = std::min(gpu.gradients, p.bucket_bytes * 2);
  }
  if (p.offload_params != OffloadDevice::kNone) {
    s.host.weights = gpu.weights;
    gpu.weights = Bytes(0);
  }
  if (p.offload_activations) {
    const auto in_flight = static_cast<std::uint64_t>(std::llround(s.layers_in_flight));
    const std::uint64_t kept = std::min<std::uint64_t>(in_flight, 2);
    gpu.activations = layer_bytes * kept;
    s.host.activations = layer_bytes * (in_flight - kept);
  }
}

std::vector<StageMemory> memory_per_stage(const TransformerConfig& m, const ParallelPlan& p,
                                          const MemoryOptions& options) {
  const LayerSharding sharding = layer_sharding(p);
  const GradientStorage grads = gradient_storage(m, p);
  const Bytes layer_bytes = layer_activation_bytes(m, sharding);
  const Bytes moe_layer_bytes = m.moe.enabled() ? layer_activation_bytes(m, sharding, true) : Bytes(0);
  const Bytes logits_bytes = logits_buffer_bytes(m, sharding);
  std::vector<StageMemory> stages;
  for (int stage = 0; stage < p.pp; ++stage) {
    StageMemory s;
    s.stage = stage;
    s.layers = stage_layers(m, p, stage);
    const int per_chunk = s.layers / p.chunks;
    s.parameters = stage_parameters(m, p, stage);
    s.trainable = trainable_stage_parameters(m, p, stage);
    // The routed experts' states are sharded over their own data-parallel group (expert_dp).
    const std::uint64_t experts = p.lora.enabled() ? 0 : stage_expert_parameters(m, p, stage);
    const ModelStateBytes states =
        model_state_bytes(m, s.trainable - experts, p.zero_stage, grad_ranks(p), p.optimizer, grads);
    s.bytes.weights = states.weights + frozen_weight_bytes(m, p, stage) +
                      fp8_weight_copy_bytes(stage_fp8_linear_parameters(m, p, stage));
    s.bytes.gradients = states.gradients;
    s.bytes.optimizer = states.optimizer;
    if (experts > 0) {
      const ModelStateBytes e = model_state_bytes(m, experts, p.zero_stage, expert_dp(p), p.optimizer, grads);
      s.bytes.weights += e.weights;
      s.bytes.gradients += e.gradients;
      s.bytes.optimizer += e.optimizer;
    }

    const int microbatches = microbatches_per_step(p);
    s.layers_in_flight = per_chunk * forwards_in_flight(p.schedule, p.pp, stage, microbatches, p.chunks);
    // Activations are whole layer-microbatches; the rounding only guards against float noise.
    // A stage with MoE layers is counted at the larger of its two kinds of layer (MoE.md).
    const Bytes stage_layer_bytes =
        stage_has_moe_layers(m, p, stage) ? std::max(layer_bytes, moe_layer_bytes) : layer_bytes;
    s.bytes.activations = stage_layer_bytes * static_cast<std::uint64_t>(std::llround(s.layers_in_flight));
    if (holds_head(m, p, stage)) {
      std::vector<double> head_only(static_cast<std::size_t>(p.chunks), 0.0);
      head_only.back() = 1.0;  // the head belongs to the last chunk of the last stage
      const auto steps = stage_schedule(p.schedule, p.pp, stage, microbatches, p.chunks);
      s.bytes.logits = logits_bytes * static_cast<std::uint64_t>(std::llround(peak_in_flight(steps, head_only)));
    }
    if (p.zero_stage == 3) {
      s.bytes.communication = Bytes(2 * largest_gather_unit(m, p, stage) * size_of(m.dtype));
    }
    s.bytes.communication += context_parallel_buffer_bytes(m, sharding);
    s.bytes.workspace = options.workspace;
    offload(p, layer_bytes, s);
    stages.push_back(s);
  }
  return stages;
}

namespace {

// A verdict against `capacity` with the stage whose `bytes_of` is largest (its fit not yet judged).
template <class BytesOf>
FitVerdict fullest_stage(const std::vector<StageMemory>& stages, Bytes capacity, BytesOf bytes_of) {
  FitVerdict v;
  v.capacity = capacity;
  for (const StageMemory& s : stages) {
    if (bytes_of(s) > v.worst_total) {
      v.worst_total = bytes_of(s);
      v.worst_stage = s.stage;
    }
  }
  return v;
}

}  // namespace

FitVerdict check_fit(const std::vector<StageMemory>& stages, Bytes capacity) {
  FitVerdict v = fullest_stage(stages, capacity, [](const StageMemory& s) { return s.bytes.total(); });
  v.fits = v.worst_total <= capacity;
  const double percent =
      capacity.count() > 0 ? 100.0 * static_cast<double>(v.worst_total.count()) / static_cast<double>(capacity.count())
                           : 0.0;
  if (v.fits) {
    v.message = fmt::format("fits: the fullest rank (stage {}) needs {} of {} ({:.0f}%)", v.worst_stage,
                            gib(v.worst_total), gib(capacity), percent);
    return v;
  }
  v.over = v.worst_total - capacity;
  const MemoryBreakdown& b = stages.at(static_cast<std::size_t>(v.worst_stage)).bytes;
  int over_stages = 0;
  for (const StageMemory& s : stages) over_stages += s.bytes.total() > capacity ? 1 : 0;
  const auto g = [](Bytes b) { return fmt::format("{:.1f}", b.gib()); };
  // Within 0.05 GiB of the capacity, one decimal of GiB would read "24.0 GiB, 0.0 GiB more than 24.0 GiB".
  const bool close = v.over.gib() < 0.05;
  const auto need = [close](Bytes b) { return close ? fmt::format("{:.3f} GiB", b.gib()) : gib(b); };
  v.message = fmt::format(
      "does not fit: stage {} needs {} per rank, {} more than the {} of the GPU (weights {}, gradients {}, "
      "optimizer {}, activations {}, logits {}, communication {}, workspace {} GiB); {} of {} stages do not fit; {}",
      v.worst_stage, need(v.worst_total), shortfall(v.over), need(capacity), g(b.weights), g(b.gradients),
      g(b.optimizer), g(b.activations), g(b.logits), g(b.communication), g(b.workspace), over_stages, stages.size(),
      advice(b));
  return v;
}

FitVerdict check_host_fit(const std::vector<StageMemory>& stages, int ranks_per_node, Bytes capacity) {
  FitVerdict v = fullest_stage(stages, capacity, [](const StageMemory& s) { return s.host.total(); });
  const Bytes node = v.worst_total * static_cast<std::uint64_t>(ranks_per_node);
  v.fits = node <= capacity;
  if (v.worst_total.count() == 0) return v;
  const HostMemory& h = stages.at(static_cast<std::size_t>(v.worst_stage)).host;
  const auto g = [](Bytes b) { return fmt::format("{:.1f}", b.gib()); };
  const std::string parts = fmt::format("weights {}, gradients {}, optimizer {}, activations {} GiB", g(h.weights),
                                        g(h.gradients), g(h.optimizer), g(h.activations));
  if (v.fits) {
    v.message = fmt::format("host memory fits: {} ranks x {} ({}) = {} of the node's {}", ranks_per_node,
                            gib(v.worst_total), parts, gib(node), gib(capacity));
    return v;
  }
  v.over = node - capacity;
  v.message = fmt::format("host memory does not fit: {} ranks x {} ({}) = {}, {} more than the node's {}",
                          ranks_per_node, gib(v.worst_total), parts, gib(node), shortfall(v.over), gib(capacity));
  return v;
}

Bytes largest_host_total(const std::vector<StageMemory>& stages) {
  Bytes most;
  for (const StageMemory& s : stages) most = std::max(most, s.host.total());
  return most;
}

Bytes largest_total(const std::vector<StageMemory>& stages) {
  Bytes most;
  for (const StageMemory& s : stages) most = std::max(most, s.bytes.total());
  return most;
}

nlohmann::json memory_to_json(const StageMemory& s) {
  const MemoryBreakdown& b = s.bytes;
  nlohmann::json out = {{"stage", s.stage},
          {"parameters", s.parameters},
          {"layers", s.layers},
          {"layers_in_flight", s.layers_in_flight},
          {"weights_bytes", b.weights.count()},
          {"gradients_bytes", b.gradients.count()},
          {"optimizer_bytes", b.optimizer.count()},
          {"activations_bytes", b.activations.count()},
          {"logits_bytes", b.logits.count()},
          {"communication_bytes", b.communication.count()},
          {"workspace_bytes", b.workspace.count()},
          {"total_bytes", b.total().count()}};
  if (s.trainable != s.parameters) out["trainable_parameters"] = s.trainable;  // LoRA's adapters
  const HostMemory& h = s.host;
  if (h.total().count() > 0) {  // only with offload: a plan without it reads as before
    out["host"] = {{"weights_bytes", h.weights.count()},         {"gradients_bytes", h.gradients.count()},
                   {"optimizer_bytes", h.optimizer.count()},     {"activations_bytes", h.activations.count()},
                   {"total_bytes", h.total().count()}};
  }
  return out;
}

StageMemory memory_from_json(const JsonAt& in) {
  const auto bytes = [&](std::string_view key) { return Bytes(static_cast<std::uint64_t>(in.number(key))); };
  StageMemory s;
  s.stage = static_cast<int>(in.number("stage"));
  s.parameters = static_cast<std::uint64_t>(in.number("parameters"));
  s.trainable = in.has("trainable_parameters") ? static_cast<std::uint64_t>(in.number("trainable_parameters"))
                                               : s.parameters;
  s.layers = static_cast<int>(in.number("layers"));
  s.layers_in_flight = in.number("layers_in_flight");
  s.bytes = {bytes("weights_bytes"),     bytes("gradients_bytes"),     bytes("optimizer_bytes"),
             bytes("activations_bytes"), bytes("logits_bytes"),        bytes("communication_bytes"),
             bytes("workspace_bytes")};
  if (in.has("host")) {
    const JsonAt host = in.at("host");
    const auto host_bytes = [&](std::string_view key) {
      return Bytes(static_cast<std::uint64_t>(host.number(key)));
    };
    s.host = {host_bytes("weights_bytes"), host_bytes("gradients_bytes"), host_bytes("optimizer_bytes"),
              host_bytes("activations_bytes")};
  }
  return s;
}

}  // namespace commscale

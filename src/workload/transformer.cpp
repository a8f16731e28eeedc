#include "workload/transformer.hpp"

#include <array>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/names.hpp"

namespace commscale {
namespace {

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

void require_positive(std::int64_t value, std::string_view origin, std::string_view key) {
  if (value < 1) throw InputError(field_where(origin, key), fmt::format("{} is not positive", value), "at least 1");
}

// Bounds far above any real model that keep every count the workload derives (parameters, bytes,
// FLOPs) inside 64 bits: a typo such as an extra digit is an error, not an overflow.
void require_at_most(std::int64_t value, std::int64_t limit, std::string_view origin, std::string_view key) {
  if (value > limit) {
    throw InputError(field_where(origin, key), fmt::format("{} is too large", value), fmt::format("at most {}", limit));
  }
}

// Where an MoE field came from: its key in a file, or its flag ("--top-k") when the model came from flags.
std::string moe_where(std::string_view origin, std::string_view key) {
  if (!origin.empty()) return fmt::format("{}: {}", origin, key);
  const std::size_t dot = key.find('.');
  return field_where("", dot == std::string_view::npos ? key : key.substr(dot + 1));
}

void validate_moe(const TransformerConfig& m, std::string_view origin, const ModelKeys& keys) {
  const MoeConfig& e = m.moe;
  const auto fail = [&](std::string_view key, std::string what, std::string expected) {
    throw InputError(moe_where(origin, key), std::move(what), std::move(expected));
  };
  if (e.experts < 0 || e.experts > kMaxExperts) {
    fail(keys.experts, fmt::format("{} experts", e.experts), fmt::format("0 (a dense model) to {}", kMaxExperts));
  }
  if (!e.enabled()) {
    if (e.top_k != 0 || e.expert_ffn != 0 || e.shared_ffn != 0 || e.first_dense_layers != 0 ||
        e.capacity_factor != 0.0 || e.load_imbalance != 1.0) {
      fail(keys.experts, "0 (a dense model) while other mixture-of-experts fields are given",
           "the number of routed experts of each MoE layer");
    }
    return;
  }
  if (e.top_k < 1 || e.top_k > e.experts) {
    fail(keys.top_k, fmt::format("{} experts a token", e.top_k), fmt::format("1 to the {} experts", e.experts));
  }
  if (e.expert_ffn < 1 || e.expert_ffn > kMaxFfn) {
    fail(keys.expert_ffn, fmt::format("{}", e.expert_ffn), fmt::format("an expert's MLP size, 1 to {}", kMaxFfn));
  }
  // The routed experts' inner sizes summed, bounded at 32 x DeepSeek-V3's (256 x 2048): each in range, 4096 experts of
  // 1048576 at hidden 262144 counted parameters past 64 bits (fewer for 10000 layers than for 1000).
  constexpr std::int64_t kMaxExpertsFfn = std::int64_t{1} << 24;
  if (std::int64_t{e.experts} * e.expert_ffn > kMaxExpertsFfn) {
    fail(keys.expert_ffn,
         fmt::format("{} experts x {} = {} summed", e.experts, e.expert_ffn, std::int64_t{e.experts} * e.expert_ffn),
         fmt::format("the routed experts' inner sizes summed at most {}", kMaxExpertsFfn));
  }
  if (e.shared_ffn < 0 || e.shared_ffn > kMaxFfn) {
    fail(keys.shared_ffn, fmt::format("{}", e.shared_ffn), fmt::format("0 (no shared expert) to {}", kMaxFfn));
  }
  if (e.first_dense_layers < 0 || e.first_dense_layers >= m.layers) {
    fail(keys.first_dense_layers, fmt::format("{} dense layers of {}", e.first_dense_layers, m.layers),
         "0 up to one less than the layers");
  }
  if (!(e.capacity_factor >= 0.0 && e.capacity_factor <= 64.0)) {
    fail(keys.capacity_factor, fmt::format("{}", e.capacity_factor), "0 (dropless) or a factor up to 64");
  }
  if (!(e.load_imbalance >= 1.0 && e.load_imbalance <= e.experts)) {
    fail(keys.load_imbalance, fmt::format("{}", e.load_imbalance),
         fmt::format("the most loaded rank's rows over the mean, 1 (balanced) to the {} experts", e.experts));
  }
  if (e.load_imbalance != 1.0 && e.capacity_factor > 0) {
    fail(keys.load_imbalance, fmt::format("{} with a capacity factor of {}", e.load_imbalance, e.capacity_factor),
         "1: a capacity factor pads every rank's rows alike");
  }
}

// MLA's fields: all 0 (ordinary attention), or a kv latent, head dimensions and a q latent or none.
void validate_mla(const TransformerConfig& m, std::string_view origin, const ModelKeys& keys) {
  const MlaConfig& a = m.mla;
  const auto fail = [&](std::string_view key, std::string what, std::string expected) {
    throw InputError(moe_where(origin, key), std::move(what), std::move(expected));
  };
  if (!a.enabled()) {
    if (a.kv_lora_rank != 0) {
      fail(keys.kv_lora_rank, fmt::format("{}", a.kv_lora_rank), "0 (ordinary attention) or the kv latent's size");
    }
    if (a.q_lora_rank != 0 || a.qk_nope_head_dim != 0 || a.qk_rope_head_dim != 0 || a.v_head_dim != 0) {
      fail(keys.kv_lora_rank, "0 (ordinary attention) while other multi-head latent attention fields are given",
           "the kv latent's size (DeepSeek's kv_lora_rank)");
    }
    return;
  }
  const std::array<std::pair<std::int64_t, std::string_view>, 4> sizes = {{{a.kv_lora_rank, keys.kv_lora_rank},
                                                                           {a.qk_nope_head_dim, keys.qk_nope_head_dim},
                                                                           {a.qk_rope_head_dim, keys.qk_rope_head_dim},
                                                                           {a.v_head_dim, keys.v_head_dim}}};
  for (const auto& [value, key] : sizes) {
    if (value < 1 || value > kMaxHidden) {
      fail(key, fmt::format("{}", value), fmt::format("1 to {} with multi-head latent attention", kMaxHidden));
    }
  }
  if (a.q_lora_rank < 0 || a.q_lora_rank > kMaxHidden) {
    fail(keys.q_lora_rank, fmt::format("{}", a.q_lora_rank),
         fmt::format("0 (queries projected from the hidden state) to {}", kMaxHidden));
  }
  // The up projections' widths over all heads, bounded as a dense MLP's inner size is: each field in range still
  // multiplied past what a step's sizes are counted in (2048 heads of 262144 + 262144: parameters of 7e18 with
  // 10000 layers, and activations that wrapped around 2^64, smaller for more heads).
  // The larger of the two fields is named.
  const std::int64_t heads = m.heads;
  const std::array<std::tuple<std::int64_t, std::string_view, std::int64_t, std::string_view>, 2> widths = {
      {{a.qk_nope_head_dim, keys.qk_nope_head_dim, a.qk_rope_head_dim, keys.qk_rope_head_dim},
       {a.qk_nope_head_dim, keys.qk_nope_head_dim, a.v_head_dim, keys.v_head_dim}}};
  for (const auto& [nope, nope_key, other, other_key] : widths) {
    if (heads * (nope + other) > kMaxFfn) {
      fail(nope >= other ? nope_key : other_key,
           fmt::format("{} heads x ({} + {}) = {} wide", heads, nope, other, heads * (nope + other)),
           fmt::format("an up projection of at most {} over all heads, as an MLP's inner size", kMaxFfn));
    }
  }
  if (m.kv_heads != m.heads) {
    fail(keys.kv_heads, fmt::format("{} KV heads of {} heads", m.kv_heads, m.heads),
         fmt::format("{}: multi-head latent attention gives every head its own keys and values", m.heads));
  }
  if (m.linear_bias) {  // from flags, the Megatron-LM switch that turns biases off
    throw InputError(origin.empty() ? "--disable-bias-linear" : field_where(origin, "linear_bias"),
                     "linear biases with multi-head latent attention",
                     "none: Megatron-Core's MLA projections have no biases (DeepSeek's)");
  }
}

}  // namespace

std::string_view name(MlpActivation a) noexcept { return a == MlpActivation::kGelu ? "gelu" : "swiglu"; }
std::string_view name(NormKind n) noexcept { return n == NormKind::kLayerNorm ? "layernorm" : "rmsnorm"; }
std::string_view name(PositionEmbedding p) noexcept { return p == PositionEmbedding::kLearned ? "learned" : "rotary"; }

MlpActivation parse_activation(std::string_view text, std::string_view where) {
  constexpr std::array kActivations = {MlpActivation::kGelu, MlpActivation::kSwiGlu};
  return parse_by_name(kActivations, text, where, "activation");
}

NormKind parse_norm(std::string_view text, std::string_view where) {
  constexpr std::array kNorms = {NormKind::kLayerNorm, NormKind::kRmsNorm};
  return parse_by_name(kNorms, text, where, "norm");
}

PositionEmbedding parse_positions(std::string_view text, std::string_view where) {
  constexpr std::array kPositions = {PositionEmbedding::kLearned, PositionEmbedding::kRotary};
  return parse_by_name(kPositions, text, where, "position embedding");
}

std::string field_where(std::string_view origin, std::string_view key) {
  if (!origin.empty()) return fmt::format("{}: {}", origin, key);
  std::string flag = fmt::format("--{}", key);
  for (char& c : flag) c = c == '_' ? '-' : c;
  return flag;
}

void validate_model(const TransformerConfig& m, std::string_view origin, const ModelKeys& keys) {
  require_positive(m.layers, origin, keys.layers);
  require_positive(m.hidden, origin, keys.hidden);
  require_positive(m.heads, origin, keys.heads);
  require_positive(m.kv_heads, origin, keys.kv_heads);
  require_positive(m.ffn, origin, keys.ffn);
  require_positive(m.seq, origin, keys.seq);
  require_at_most(m.layers, kMaxLayers, origin, keys.layers);
  require_at_most(m.hidden, kMaxHidden, origin, keys.hidden);
  require_at_most(m.ffn, kMaxFfn, origin, keys.ffn);
  require_at_most(m.seq, kMaxSeq, origin, keys.seq);
  require_at_most(m.vocab, kMaxVocab, origin, keys.vocab);
  if (m.vocab < 0) {
    throw InputError(field_where(origin, keys.vocab), fmt::format("{} is negative", m.vocab),
                     "0 (no embedding, logits or loss) or a vocabulary size");
  }
  if (m.hidden % m.heads != 0) {
    throw InputError(field_where(origin, keys.heads),
                     fmt::format("{} heads do not divide the hidden size {}", m.heads, m.hidden),
                     "a head count that divides the hidden size");
  }
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
    throw InputError(field_where(origin, keys.kv_heads),
                     fmt::format("{} KV heads do not divide the {} attention heads", m.kv_heads, m.heads),
                     "a divisor of the head count (equal to it for multi-head attention)");
  }
  if (m.dtype != DataType::kBFloat16 && m.dtype != DataType::kFloat16 && m.dtype != DataType::kFloat32) {
    throw InputError(field_where(origin, "dtype"), fmt::format("{} is not a training type", name(m.dtype)),
                     "bf16, fp16 or fp32");
  }
  validate_moe(m, origin, keys);
  validate_mla(m, origin, keys);
}

// Megatron-Core's duplicated TELinear down projections, H -> q_lora_rank and H -> kv_lora_rank + qk_rope_head_dim,
// and the norms of the two latents.
std::uint64_t mla_replicated_parameters(const TransformerConfig& m) noexcept {
  if (!m.mla.enabled()) return 0;
  const MlaConfig& a = m.mla;
  const std::uint64_t norm = m.norm == NormKind::kLayerNorm ? 2 : 1;  // parameters per normalized element
  const std::uint64_t latents = u(a.q_lora_rank) + u(a.kv_lora_rank);
  return u(m.hidden) * (latents + u(a.qk_rope_head_dim)) + norm * latents;
}

std::uint64_t norm_parameters(const TransformerConfig& m) noexcept {
  return m.norm == NormKind::kLayerNorm ? 2 * u(m.hidden) : u(m.hidden);
}

// MLA's projections and latent norms (LayerParameters::qkv): the replicated ones (mla_replicated_parameters),
// and the up projections (or the query projection from H) split t ways.
static std::uint64_t mla_qkv_parameters(const TransformerConfig& m, std::uint64_t t) {
  const MlaConfig& a = m.mla;
  const std::uint64_t n = u(m.heads);
  const std::uint64_t q_out = n * u(a.qk_head_dim());
  const std::uint64_t q_up = a.q_lora_rank > 0 ? u(a.q_lora_rank) * q_out : u(m.hidden) * q_out;
  const std::uint64_t kv_up = u(a.kv_lora_rank) * n * u(a.qk_nope_head_dim + a.v_head_dim);
  return mla_replicated_parameters(m) + (q_up + kv_up) / t;
}

LayerParameters layer_parameters(const TransformerConfig& m, int tp) {
  const std::uint64_t t = u(tp);
  const std::uint64_t h = u(m.hidden);
  const std::uint64_t qkv_out = u(head_dim(m)) * u(m.heads + 2 * m.kv_heads);  // (a + 2g) d
  const std::uint64_t fc1_out = u(m.ffn) * (m.activation == MlpActivation::kSwiGlu ? 2 : 1);
  const std::uint64_t bias = m.linear_bias ? 1 : 0;
  LayerParameters p;
  p.ln1 = norm_parameters(m);
  p.ln2 = norm_parameters(m);
  p.qkv = (h * qkv_out + bias * qkv_out) / t;
  p.proj = h * h / t + bias * h;
  if (m.mla.enabled()) {  // no biases (validate_model)
    p.qkv = mla_qkv_parameters(m, t);
    p.proj = u(m.heads) * u(m.mla.v_head_dim) * h / t;
  }
  p.fc1 = (h * fc1_out + bias * fc1_out) / t;
  p.fc2 = u(m.ffn) * h / t + bias * h;
  return p;
}

std::uint64_t expert_parameters(const TransformerConfig& m) {
  TransformerConfig expert = m;  // an expert is the layer's MLP at its own inner size, unsharded
  expert.ffn = m.moe.expert_ffn;
  const LayerParameters p = layer_parameters(expert, 1);
  return p.fc1 + p.fc2;
}

LayerParameters layer_parameters(const TransformerConfig& m, int tp, int layer, int ep, int etp) {
  if (!is_moe_layer(m, layer)) return layer_parameters(m, tp);
  TransformerConfig shared = m;
  shared.ffn = m.moe.shared_ffn;
  LayerParameters p = layer_parameters(shared, tp);
  if (m.moe.shared_ffn == 0) p.fc1 = p.fc2 = 0;  // (the row-parallel bias of an MLP that is not there)
  p.router = u(m.hidden) * u(m.moe.experts);
  p.experts = u(m.moe.experts / ep) * expert_parameters(m) / u(etp);  // etp divides F; no biases with etp > 1
  return p;
}

std::int64_t vocab_shard(const TransformerConfig& m, int tp) noexcept { return (m.vocab + tp - 1) / tp; }

std::uint64_t embedding_parameters(const TransformerConfig& m, int tp) {
  if (m.vocab == 0) return 0;
  const std::uint64_t positions = m.positions == PositionEmbedding::kLearned ? u(m.seq) * u(m.hidden) : 0;
  return u(vocab_shard(m, tp)) * u(m.hidden) + positions;
}

std::uint64_t output_parameters(const TransformerConfig& m, int tp, int pp) {
  if (m.vocab == 0 || (m.tied_embeddings && pp == 1)) return 0;
  return u(vocab_shard(m, tp)) * u(m.hidden);
}

namespace {

// Every layer's parameters, with `experts_counted` routed experts of each MoE layer.
std::uint64_t layers_parameters(const TransformerConfig& m, std::uint64_t experts_counted) {
  const auto moe_layers = u(moe_layer_count(m));
  std::uint64_t total = (u(m.layers) - moe_layers) * layer_parameters(m, 1).total();
  if (moe_layers == 0) return total;
  const LayerParameters moe = layer_parameters(m, 1, m.layers - 1, 1);
  return total + moe_layers * (moe.dense() + experts_counted * expert_parameters(m));
}

std::uint64_t count_with_experts(const TransformerConfig& m, std::uint64_t experts_counted) {
  std::uint64_t total = layers_parameters(m, experts_counted);
  if (m.vocab == 0) return total;
  total += embedding_parameters(m, 1) + norm_parameters(m);  // + the final norm
  if (!m.tied_embeddings) total += u(m.vocab) * u(m.hidden);
  return total;
}

}  // namespace

std::uint64_t parameter_count(const TransformerConfig& m) { return count_with_experts(m, u(m.moe.experts)); }
std::uint64_t active_parameter_count(const TransformerConfig& m) { return count_with_experts(m, u(m.moe.top_k)); }

std::string experts_text(const TransformerConfig& m) {
  if (!m.moe.enabled()) return {};
  const auto count = [](std::uint64_t n) {
    return n >= 1'000'000'000 ? fmt::format("{:.1f} B", static_cast<double>(n) / 1e9)
                              : fmt::format("{:.1f} M", static_cast<double>(n) / 1e6);
  };
  return fmt::format("{} experts of F {} in {} of {} layers, top {}{}, {}; {} parameters, {} active", m.moe.experts,
                     m.moe.expert_ffn, moe_layer_count(m), m.layers, m.moe.top_k,
                     m.moe.shared_ffn > 0 ? fmt::format(", shared F {}", m.moe.shared_ffn) : std::string(),
                     m.moe.capacity_factor > 0 ? fmt::format("capacity factor {:g}", m.moe.capacity_factor)
                     : m.moe.load_imbalance > 1.0
                         ? fmt::format("dropless, the busiest rank at {:g}x the mean", m.moe.load_imbalance)
                         : std::string("dropless"),
                     count(parameter_count(m)), count(active_parameter_count(m)));
}

}  // namespace commscale

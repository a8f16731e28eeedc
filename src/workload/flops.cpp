#include "workload/flops.hpp"

#include "workload/lora.hpp"

namespace commscale {
namespace {

struct Terms {
  double b, s, l, h, a, g, f, v;
};

Terms terms(const TransformerConfig& m, std::int64_t batch) {
  return {static_cast<double>(batch),    static_cast<double>(m.seq),   static_cast<double>(m.layers),
          static_cast<double>(m.hidden), static_cast<double>(m.heads), static_cast<double>(m.kv_heads),
          static_cast<double>(m.ffn),    static_cast<double>(m.vocab)};
}

// The MLP width one token goes through, averaged over the layers: F for a dense model; for an MoE model
// (Megatron-LM's num_floating_point_operations) the dense layers' F, and in the MoE layers top-k experts'
// F_e plus the shared experts'. The router's h x experts GEMM is left out, as Megatron-LM leaves it out.
double mlp_width(const TransformerConfig& m) {
  if (!m.moe.enabled()) return static_cast<double>(m.ffn);
  const double moe_layers = moe_layer_count(m);
  const double dense_layers = m.layers - moe_layers;
  const double moe =
      static_cast<double>(m.moe.top_k) * static_cast<double>(m.moe.expert_ffn) + static_cast<double>(m.moe.shared_ffn);
  return (dense_layers * static_cast<double>(m.ffn) + moe_layers * moe) / m.layers;
}

// The attention's projections over h^2: 1 + g/a for Q, K, V and the output (2 h^2 (1 + g/a) weights, counted
// as 12 h^2 per token by the factor outside). With MLA, Megatron-LM's sum (its num_floating_point_operations):
// the q latent's down and up projections and norm (or the query projection from h), the kv latent's, the keys'
// rotary part and the output projection.
double attention_weights(const TransformerConfig& m, const Terms& t) {
  if (!m.mla.enabled()) return 1.0 + t.g / t.a;
  const MlaConfig& a = m.mla;
  const double qk = static_cast<double>(a.qk_head_dim());
  const double q_lora = static_cast<double>(a.q_lora_rank);
  const double kv_lora = static_cast<double>(a.kv_lora_rank);
  const double q = a.q_lora_rank > 0 ? q_lora * (t.h + t.a * qk + 1.0) : t.h * t.a * qk;
  const double kv = kv_lora * (t.h + t.a * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim) + 1.0);
  const double rope = t.h * static_cast<double>(a.qk_rope_head_dim);
  const double proj = t.a * static_cast<double>(a.v_head_dim) * t.h;
  return (q + kv + rope + proj) / (2.0 * t.h * t.h);
}

// The attention core (QK^T and AV over every key, as Megatron-LM's older count and Narayanan et al. take it)
// over 12 h^2 per token: s/h; with MLA the products' widths, a (d_nope + d_rope) and a d_v, in place of 2h.
double attention_core(const TransformerConfig& m, const Terms& t) {
  if (!m.mla.enabled()) return t.s / t.h;
  const double widths = t.a * static_cast<double>(m.mla.qk_head_dim() + m.mla.v_head_dim);
  return t.s * widths / (2.0 * t.h * t.h);
}

// Megatron-LM's bracket split into what multiplies weight matrices (the projections, the MLP and the output
// layer) and the attention core (QK^T and AV, the s/h term).
double weight_terms(const TransformerConfig& m, const Terms& t) {
  const double glu = m.activation == MlpActivation::kSwiGlu ? 1.5 : 1.0;
  return attention_weights(m, t) + mlp_width(m) / t.h * glu + t.v / (2.0 * t.l * t.h);
}

}  // namespace

Flops megatron_model_flops(const TransformerConfig& m, std::int64_t batch) {
  const Terms t = terms(m, batch);
  return Flops(12.0 * t.b * t.s * t.l * t.h * t.h * (weight_terms(m, t) + attention_core(m, t)));
}

Flops model_flops(const TransformerConfig& m, const LoraSpec& lora, std::int64_t batch) {
  if (!lora.enabled()) return megatron_model_flops(m, batch);
  const Terms t = terms(m, batch);
  const double bslh2 = t.b * t.s * t.l * t.h * t.h;
  const auto adapters = static_cast<double>(lora_layer_parameters(m, lora));
  return Flops(12.0 * bslh2 * attention_core(m, t) + 8.0 * bslh2 * weight_terms(m, t) +
               6.0 * t.b * t.s * t.l * adapters);
}

Flops narayanan_flops(const TransformerConfig& m, std::int64_t batch) {
  const Terms t = terms(m, batch);
  return Flops(72.0 * t.b * t.s * t.l * t.h * t.h * (1.0 + t.s / (6.0 * t.h) + t.v / (12.0 * t.l * t.h)));
}

Flops narayanan_full_recompute_flops(const TransformerConfig& m, std::int64_t batch) {
  const Terms t = terms(m, batch);
  return Flops(96.0 * t.b * t.s * t.l * t.h * t.h * (1.0 + t.s / (6.0 * t.h) + t.v / (16.0 * t.l * t.h)));
}

Flops gpt_layer_forward_flops(const TransformerConfig& m, std::int64_t batch) {
  const Terms t = terms(m, batch);
  return Flops(24.0 * t.b * t.s * t.h * t.h + 4.0 * t.b * t.s * t.s * t.h);
}

}  // namespace commscale

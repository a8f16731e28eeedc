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

// Megatron-LM's bracket split into what multiplies weight matrices (the projections, the MLP and the output
// layer) and the attention core (QK^T and AV, the s/h term).
double weight_terms(const TransformerConfig& m, const Terms& t) {
  const double glu = m.activation == MlpActivation::kSwiGlu ? 1.5 : 1.0;
  return (1.0 + t.g / t.a) + mlp_width(m) / t.h * glu + t.v / (2.0 * t.l * t.h);
}

}  // namespace

Flops megatron_model_flops(const TransformerConfig& m, std::int64_t batch) {
  const Terms t = terms(m, batch);
  return Flops(12.0 * t.b * t.s * t.l * t.h * t.h * (weight_terms(m, t) + t.s / t.h));
}

Flops model_flops(const TransformerConfig& m, const LoraSpec& lora, std::int64_t batch) {
  if (!lora.enabled()) return megatron_model_flops(m, batch);
  const Terms t = terms(m, batch);
  const double bslh2 = t.b * t.s * t.l * t.h * t.h;
  const auto adapters = static_cast<double>(lora_layer_parameters(m, lora));
  return Flops(12.0 * bslh2 * (t.s / t.h) + 8.0 * bslh2 * weight_terms(m, t) + 6.0 * t.b * t.s * t.l * adapters);
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

#include "workload/flops.hpp"

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

}  // namespace

Flops megatron_model_flops(const TransformerConfig& m, std::int64_t batch) {
  const Terms t = terms(m, batch);
  const double glu = m.activation == MlpActivation::kSwiGlu ? 1.5 : 1.0;
  const double attention = 1.0 + t.g / t.a + t.s / t.h;
  const double mlp = t.f / t.h * glu;
  const double logits = t.v / (2.0 * t.l * t.h);
  return Flops(12.0 * t.b * t.s * t.l * t.h * t.h * (attention + mlp + logits));
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

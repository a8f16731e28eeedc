#pragma once

// FLOPs of a training step in closed form (Narayanan et al. 2021, arXiv 2104.04473, eq. 3), to check
// the per-op counts against and to report model FLOPs (the MFU basis, no recompute). `batch` is the
// number of sequences in the step (the global batch); a multiply-add counts as two FLOPs.

#include <cstdint>

#include "core/plan_terms.hpp"
#include "core/units.hpp"
#include "workload/transformer.hpp"

namespace commscale {

// Megatron-LM's general form (num_floating_point_operations): covers GQA and SwiGLU,
// 12 B s l h^2 [(1 + g/a + s/h) + (F/h) glu + V/(2 l h)], glu = 1.5 for SwiGLU; for an MoE model F is the
// width a token goes through, averaged over the layers: top-k experts' plus the shared experts' in an MoE layer.
[[nodiscard]] Flops megatron_model_flops(const TransformerConfig& m, std::int64_t batch);

// The MFU basis of a step: megatron_model_flops, or with LoRA (workload/lora.hpp) the work LoRA fine-tuning
// needs. Megatron's 3x (forward, data gradient, weight gradient) becomes 2x for the frozen weight matrices of
// the blocks and the output layer (no weight gradient), stays 3x for the attention core (its backward takes
// gradients for Q, K and V), and the adapters add 3 x 2 B s r (in + out) per targeted matrix:
//   12 B s l h^2 (s/h) + 8 B s l h^2 [(1 + g/a) + (F/h) glu + V/(2 l h)] + 6 B s l P_lora,
// P_lora the adapter parameters of a layer. Llama-2-7B, B 1, r 8 on q, v: 1.3474e14 (Megatron's 1.8876e14).
[[nodiscard]] Flops model_flops(const TransformerConfig& m, const LoraSpec& lora, std::int64_t batch);

// Narayanan et al. 2021 (arXiv 2104.04473), GPT with F = 4h: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
[[nodiscard]] Flops narayanan_flops(const TransformerConfig& m, std::int64_t batch);

// The same with full activation recompute (one more forward of every layer):
// 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
[[nodiscard]] Flops narayanan_full_recompute_flops(const TransformerConfig& m, std::int64_t batch);

// Forward FLOPs of one layer for B sequences, GPT with F = 4h: 24 B s h^2 + 4 B s^2 h.
[[nodiscard]] Flops gpt_layer_forward_flops(const TransformerConfig& m, std::int64_t batch);

}  // namespace commscale

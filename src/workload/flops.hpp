#pragma once

// FLOPs of a training step in closed form (Narayanan et al. 2021, arXiv 2104.04473, eq. 3), to check
// the per-op counts against and to report model FLOPs (the MFU basis, no recompute). `batch` is the
// number of sequences in the step (the global batch); a multiply-add counts as two FLOPs.

#include <cstdint>

#include "core/units.hpp"
#include "workload/transformer.hpp"

namespace commscale {

// Megatron-LM's general form (num_floating_point_operations): covers GQA and SwiGLU,
// 12 B s l h^2 [(1 + g/a + s/h) + (F/h) glu + V/(2 l h)], glu = 1.5 for SwiGLU.
[[nodiscard]] Flops megatron_model_flops(const TransformerConfig& m, std::int64_t batch);

// Narayanan et al. 2021 (arXiv 2104.04473), GPT with F = 4h: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
[[nodiscard]] Flops narayanan_flops(const TransformerConfig& m, std::int64_t batch);

// The same with full activation recompute (one more forward of every layer):
// 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
[[nodiscard]] Flops narayanan_full_recompute_flops(const TransformerConfig& m, std::int64_t batch);

// Forward FLOPs of one layer for B sequences, GPT with F = 4h: 24 B s h^2 + 4 B s^2 h.
[[nodiscard]] Flops gpt_layer_forward_flops(const TransformerConfig& m, std::int64_t batch);

}  // namespace commscale

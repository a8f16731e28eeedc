#pragma once

// LoRA and QLoRA (core/plan_terms.hpp, LoraSpec): which linear layers of a block carry adapters, how many
// parameters the adapters add, and what the frozen base weights take in memory.
//
// Adapter parameters (Hu et al. 2021, arXiv 2106.09685): r (in + out) per targeted linear layer, A being
// in x r and B r x out. The layers are Hugging Face PEFT's modules: q_proj (h -> a d), k_proj and v_proj
// (h -> g d), o_proj (h -> h), and for the MLP gate_proj and up_proj (h -> F, SwiGLU) or fc1 (h -> F), and
// down_proj / fc2 (F -> h). Llama-2-7B (h 4096, F 11008, 32 layers): q,v at r 8 is 32 x 2 x 8 x 8192 =
// 4,194,304 (PEFT's print_trainable_parameters); all linear layers at r 16 is 39,976,960.
//
// QLoRA's frozen base (Dettmers et al. 2023, arXiv 2305.14314): the block's linear weights in 4-bit NF4,
// blocks of 64 with an absmax each, double-quantized to 8 bits with one fp32 constant per 256 blocks:
// 0.5 + 1/64 + 4/(64 x 256) bytes a parameter; norms, the embedding and the output layer stay in the
// model's dtype. Each base GEMM first dequantizes its weight to the model's dtype (a memory-bound kernel).

#include <cstdint>
#include <string>
#include <vector>

#include "core/plan_terms.hpp"
#include "core/units.hpp"
#include "workload/transformer.hpp"

namespace commscale {

struct LoraLinear {
  std::string name;  // PEFT's module name: "q_proj", ...
  std::int64_t in = 0;
  std::int64_t out = 0;
};

// The targeted layers of one block, unsharded (LoRA is modelled with tp 1).
[[nodiscard]] std::vector<LoraLinear> lora_linears(const TransformerConfig& m, LoraTargets targets);

// Adapter parameters of one block: the sum of r (in + out) over lora_linears.
[[nodiscard]] std::uint64_t lora_layer_parameters(const TransformerConfig& m, const LoraSpec& lora);

// Bytes a block's frozen linear weights take: 16-bit as the model's dtype, or NF4 (header comment),
// rounded up to whole blocks of 64 and 256 blocks per matrix.
[[nodiscard]] Bytes lora_base_linear_bytes(const TransformerConfig& m, const LoraSpec& lora);

}  // namespace commscale

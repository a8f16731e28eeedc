#pragma once

// FP8 training of a layer's linear GEMMs as TransformerEngine runs them under Megatron-LM (--fp8-format hybrid,
// te.fp8_autocast; src/predict/FP8.md has the sources), applied to a layer's op lists (layer_ops.hpp):
//
//  - the four linear layers' GEMMs (qkv, attn.proj, mlp.fc1, mlp.fc2: TE's Linear / LayerNormLinear /
//    LayerNormMLP; in an MoE layer the routed experts' grouped fc1 and fc2, TE's GroupedLinear, and the shared
//    experts' in place of the MLP's, the router staying in the model's type) become FP8 with fp32 accumulate
//    and a bf16 output: forward E4M3 x E4M3, dgrad E5M2 (the output gradient) x E4M3 (the weight), wgrad E4M3
//    (the input) x E5M2 (the output gradient), each dimension padded to a multiple of 16 as TE pads an
//    expert's rows (Qwen1.5-MoE's 274 to 288; cuBLASLt has no FP8 kernel otherwise). Attention's products
//    and the logits stay in the model's type, as TE's and Megatron-LM's defaults keep them;
//  - before each FP8 GEMM whose input is not FP8 yet, a cast kernel: the forward GEMM's input and the dgrad's
//    output gradient, read in the model's type and written as two FP8 copies (TE's fused cast-transpose: the
//    row-wise copy this GEMM reads and the column-wise one the wgrad reads, as Hopper's and Ada's TN-only FP8
//    GEMMs need; Blackwell needs one, not modelled). The wgrad reads those copies: no cast of its own;
//  - the recipe's own costs: current scaling computes each tensor's amax in a reduction kernel before its cast
//    (read once more), and for a sequence-parallel input (the norm outputs of qkv and fc1 forward, the gathered
//    gradients of attn.proj and mlp.fc2 backward) all-reduces that fp32 amax over tp; block scaling writes a
//    fp32 scale per 128 values (Float8BlockScaling's 1 x 128 tiles) with the cast and reduces nothing; delayed
//    scaling takes its scales from the amax history, whose reduction runs once per microbatch and chunk
//    (amax_reduction_ops, emitted by the program builder);
//  - the weights' FP8 copies (and transposes) are cast once per step after the optimizer updates the weights
//    (weight_cast_kernel), as Megatron-LM's first microbatch does with is_first_microbatch: later microbatches
//    reuse them.
// Memory (memory.hpp, plan_memory.cpp): the inputs the four GEMMs keep for their backward are FP8 (1 byte); the
// weights' FP8 copies and transposes, 2 bytes a linear parameter, are kept beside the 16-bit weights.

#include <cstdint>

#include "core/units.hpp"
#include "workload/op_list.hpp"
#include "workload/transformer.hpp"

namespace commscale {

// The layer's list with its linear GEMMs in FP8 and the recipe's casts, amax kernels and tp amax all-reduces
// inserted before them (the header's rules). The list unchanged for Fp8Recipe::kNone.
[[nodiscard]] OpList with_fp8(OpList list, const TransformerConfig& m, const LayerSharding& s);

// Parameters of a layer's linear layers on one rank (what TE casts to FP8): the attention's and the MLP's, or an
// MoE layer's local and shared experts'; not the router's.
[[nodiscard]] std::uint64_t fp8_linear_parameters(const LayerParameters& p) noexcept;

// The once-per-step cast of `parameters` linear weights to FP8 with their transposes: read in the model's type,
// 2 bytes written.
[[nodiscard]] MemoryKernel weight_cast_kernel(const TransformerConfig& m, std::uint64_t parameters);

// Bytes of the FP8 weight copies TE keeps for `parameters` linear weights: a row-wise and a column-wise copy.
[[nodiscard]] Bytes fp8_weight_copy_bytes(std::uint64_t parameters) noexcept;

// What FP8 saves of layer_activation_bytes: the four GEMMs' saved inputs at 1 byte instead of the model's w
// (0 with full recompute, which keeps the layer input only).
[[nodiscard]] Bytes fp8_activation_saving(const TransformerConfig& m, const LayerSharding& s);

// Delayed scaling's amax reduction after a chunk's forward (or backward) of `layers` layers: the fp32 amaxes of
// the chunk's FP8 tensors (TE's forward meta: input, weight and output per GEMM; backward: output gradient and
// input gradient), reduced (max) over tp x dp as Megatron-LM's amax-reduction group. Bytes of that buffer, four
// linear layers a layer (an MoE layer's grouped experts keep an amax per expert GEMM: a few KB more, left out of
// this latency-bound all-reduce).
[[nodiscard]] Bytes amax_reduction_bytes(int layers, bool backward) noexcept;

}  // namespace commscale

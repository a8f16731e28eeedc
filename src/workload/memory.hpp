#pragma once

// Memory primitives per rank: model states per ZeRO stage (Rajbhandari et al.,
// arXiv 1910.02054) and activations per layer (Korthikanti et al., arXiv 2205.05198). The pipeline
// composition (how many microbatches are in flight on each stage) is in parallel/plan_memory.hpp.

#include <cstdint>
#include <optional>

#include "core/units.hpp"
#include "workload/op_list.hpp"
#include "workload/transformer.hpp"

namespace commscale {

struct ModelStateBytes {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;  // the optimizer's state: for adam fp32 master weights and moments
};

// How a framework keeps the gradients, where not in the model's type beside the optimizer's state alone.
struct GradientStorage {
  std::optional<DataType> main;  // the gradient buffer's type (Megatron-LM in bf16: fp32 main_grad)
  bool fp32_copy = false;        // the optimizer keeps an fp32 copy, sharded as its state (Megatron-LM in fp16)
};

// `parameters` is this rank's share after tensor and pipeline sharding (Psi in the ZeRO paper); w = bytes of
// the model dtype, g = of the gradients (w unless `grads.main`), o = the optimizer's state per parameter
// (optimizer_state_bytes: mixed precision Adam 12 (16-bit) or 8 (fp32), AdamW 2w, Adam8bit 6 + 8/256
// (16-bit), SGD and none 0; + 4 with `grads.fp32_copy`): stage 0 (w + g + o) Psi; 1: optimizer / d;
// 2: gradients too; 3: weights too. Shards round up.
[[nodiscard]] ModelStateBytes model_state_bytes(const TransformerConfig& m, std::uint64_t parameters, int zero_stage,
                                                int dp, Optimizer optimizer = Optimizer::kAdam,
                                                const GradientStorage& grads = {});

// Bytes one layer keeps from its forward to its backward for one microbatch on one tensor-parallel
// rank. Korthikanti et al.'s count generalized to GQA (K and V are g/a of Q), any MLP size and SwiGLU
// (the activation input is 2F wide), with masks of one byte and tensors of the model dtype:
//   replicated (÷t only with sequence parallelism): norm inputs 2, QKV and fc1 inputs 2, masks 2/w
//   split t ways: Q 1, K and V 2g/a, projection input 1, activation input F/h (2F/h SwiGLU), fc2 input F/h
//   the s^2 terms, split t ways: softmax and dropout outputs 2 a s/h, dropout mask a s/(h w)
// all times T h w (T = B s tokens). For GPT (g = a, F = 4h, w = 2) this is s B h (10 + 24/t + 5 a s/(h t))
// without and s B h/t (34 + 5 a s/h) with sequence parallelism. Selective recompute and flash attention
// drop the s^2 terms; full recompute keeps only the layer input, 2 s B h (÷t with sequence parallelism).
// With FP8 (LayerSharding::fp8) the four linear GEMMs' inputs are kept in FP8, 1 byte (fp8_ops.hpp).
// `moe`: the layer's MoE form: the dense terms with the shared experts' MLP for the dense MLP, and the routed
// side's tensors (MOE.md): the router's fp32 probabilities (T_r E 4), the dispatched rows (R h w), the experts'
// activation and fc2 inputs (R F_e, 2 R F_e with SwiGLU, and R F_e, times w) and their outputs for the combine's
// weighted sum (R h w); T_r the tokens the rank routes, R = T_r k (x the capacity factor).
[[nodiscard]] Bytes layer_activation_bytes(const TransformerConfig& m, const LayerSharding& s, bool moe = false);

// Context parallelism's key-value buffers while a layer's attention runs (CONTEXT_PARALLEL.md), 0 with cp 1:
// p2p, the backward ring's two buffers of a KV block and its dKV (4 blocks of T/cp x 2 g d / t x w bytes; the
// forward's two KV buffers are less); all_gather, the gathered K and V and the unreduced dK and dV of the whole
// sequence (2 cp blocks).
[[nodiscard]] Bytes context_parallel_buffer_bytes(const TransformerConfig& m, const LayerSharding& s);

// The logits' fp32 softmax kept for the backward on the last stage: 4 T ceil(V/t) bytes per microbatch.
[[nodiscard]] Bytes logits_buffer_bytes(const TransformerConfig& m, const LayerSharding& s);

}  // namespace commscale

#pragma once

// Per-op costs of a transformer layer, the embedding, the head (final norm, logits, loss) and the
// optimizer, for one tensor-parallel rank and one microbatch, following Megatron-LM's layout:
//
//   forward:  ln1 [AG] qkv | attn.scores attn.softmax attn.dropout attn.context | attn.proj AR|RS
//             attn.residual ln2 [AG] mlp.fc1 mlp.act mlp.fc2 AR|RS mlp.residual
//
// AR is the tensor-parallel all-reduce; with sequence parallelism it becomes a reduce-scatter (RS)
// after a row-parallel GEMM and an all-gather (AG) before a column-parallel one. Backward runs the
// mirror image: each GEMM Y = X W becomes dgrad dX = dY W^T and wgrad dW = X^T dY (equal FLOPs each),
// the dgrad of a column-parallel GEMM is all-reduced (or reduce-scattered) while the wgrad runs, and
// with sequence parallelism the sharded norm output is all-gathered again for the wgrad (Megatron-LM
// keeps only the shard, which is what makes activations 1/t).
//
// Flash attention keeps the scores and context GEMMs but drops the softmax and dropout kernels (fused,
// no s x s tensor in memory), and its backward recomputes QK^T (one more GEMM). A causal flash kernel
// skips the tiles above the diagonal, so each of its products runs over the causal share of the keys
// (flash_causal_keys), and is marked Gemm::flash: the predictor prices it at the attention kernel's
// efficiency, the executor runs it as a GEMM of that shape.
// Selective recompute re-runs scores, softmax, dropout and context before the attention backward
// (with flash attention there is nothing left to recompute). Full recompute re-runs the whole layer
// forward, its collectives included, before the layer's backward.
//
// Dropout kernels (and their masks in the memory model) are present for models that train with
// dropout (TransformerConfig::dropout: GPT, as Korthikanti et al. assume); Llama-style models have none.
//
// With LayerSharding::kernels == KernelSet::kEager a layer is the kernels eager PyTorch runs for the
// same block, one per tensor operation (layer_ops.cpp lists them): the same GEMMs, more memory-bound
// kernels, and the weight gradients accumulated over microbatches by adds of their own. The
// embedding and the head keep the fused kernels (the PyTorch reference has neither), with those adds.
// The memory model (memory.hpp) stays Megatron-LM's.

#include "workload/op_list.hpp"
#include "workload/transformer.hpp"

namespace commscale {

// `moe`: the layer's MoE form (is_moe_layer; layer_ops.cpp, moe_forward: router, dispatch all-to-all over the
// expert-parallel group, grouped expert GEMMs, combine all-to-all, shared experts), with fused kernels only.
[[nodiscard]] OpList layer_forward_ops(const TransformerConfig& m, const LayerSharding& s, bool moe = false);
// Includes the recompute prelude that `s.recompute` asks for, with Phase::kRecompute. `accumulate`:
// the weight gradients add to those of earlier microbatches (every microbatch of a step but the
// first), which costs a kernel only with eager kernels.
[[nodiscard]] OpList layer_backward_ops(const TransformerConfig& m, const LayerSharding& s, bool accumulate = false,
                                        bool moe = false);

// First pipeline stage: token (+ learned position) embedding, vocabulary-parallel. Empty for vocab 0.
[[nodiscard]] OpList embedding_forward_ops(const TransformerConfig& m, const LayerSharding& s);
[[nodiscard]] OpList embedding_backward_ops(const TransformerConfig& m, const LayerSharding& s,
                                            bool accumulate = false);
// Last pipeline stage: final norm, logits, vocabulary-parallel cross entropy. Empty for vocab 0.
// `pp` decides whether a tied output weight is a copy (pp > 1) whose gradient the logits wgrad completes.
[[nodiscard]] OpList head_forward_ops(const TransformerConfig& m, const LayerSharding& s);
[[nodiscard]] OpList head_backward_ops(const TransformerConfig& m, const LayerSharding& s, int pp,
                                       bool accumulate = false);

// The keys one query row of a causal flash kernel works through on average: the tiles on and below
// the diagonal, with FlashAttention-2's 128-row tiles, (s + 128) / 2 (at most s).
[[nodiscard]] constexpr std::int64_t flash_causal_keys(std::int64_t seq) noexcept {
  return seq < 128 ? seq : (seq + 128) / 2;
}
// FLOPs of one flash-attention call as the step program counts them: 2 products forward, 5 backward
// (QK^T again, dP, dV, dQ, dK), each 2 x seq x causal keys x head_dim x batch.
[[nodiscard]] Flops flash_attention_flops(std::int64_t seq, std::int64_t batch, std::int64_t head_dim, bool backward);

// The optimizer's update over `parameters` (this rank's optimizer shard), one kernel moving what it
// reads and writes: the gradient, the state (optimizer_bytes_per_parameter) and the weight (for adam the
// fp32 master weight as part of the state, and the 16-bit weight written). Not for Optimizer::kNone.
// `kernels`: the step's kernel set (eager PyTorch's fused AdamW has rows of its own in a profile).
[[nodiscard]] MemoryKernel optimizer_kernel(const TransformerConfig& m, std::uint64_t parameters,
                                            Optimizer optimizer = Optimizer::kAdam,
                                            KernelSet kernels = KernelSet::kFused);

// The optimizer's update over `parameters` run by the host (ZeRO-Offload, DeepSpeed's CPU Adam): the
// 16-bit gradients copied to the host and the 16-bit weights copied back, w bytes a parameter each way
// over PCIe; the GPU runs nothing (MemoryKernelKind::kHostOptimizer).
[[nodiscard]] MemoryKernel host_optimizer_kernel(const TransformerConfig& m, std::uint64_t parameters);

// Bytes of optimizer state per parameter: adam's fp32 master weight + two fp32 moments for 16-bit
// training (12), two moments for fp32 training (8); adamw's two moments of the weights' type; adam8bit's
// two one-byte moments and, for 16-bit training, the fp32 master weight (6; 2 for fp32 training) before its
// block scales; none for sgd and none.
[[nodiscard]] std::uint64_t optimizer_bytes_per_parameter(const TransformerConfig& m,
                                                          Optimizer optimizer = Optimizer::kAdam) noexcept;

// The optimizer state of `parameters` (one rank's shard): optimizer_bytes_per_parameter each, plus for
// adam8bit two fp32 absmax scales per block of kAdam8bitBlock (Dettmers et al. 2022, block-wise quantization):
// 6 Psi + 8 ceil(Psi / 256) in 16-bit training.
[[nodiscard]] Bytes optimizer_state_bytes(const TransformerConfig& m, std::uint64_t parameters,
                                          Optimizer optimizer = Optimizer::kAdam) noexcept;

}  // namespace commscale

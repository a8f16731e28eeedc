#pragma once

// Builds the step program (program/op.hpp) of a plan: one op list per pipeline stage, shared by the
// tp * dp ranks of the stage, and each rank's communication groups.
//
// Groups, by handle (the same on every rank that has them):
//   0 "tp"        tensor-parallel group (members by tp coordinate)
//   1 "dp"        data-parallel group (by dp coordinate)
//   2 "pp-fwd"    pipeline group (by stage) carrying activations forward
//   3 "pp-bwd"    the same ranks carrying gradients backward: a separate communicator, so that the
//                 two flows between one pair of ranks (interleaved with pp 2) are never confused
//   4 "embedding" first and last stage, tied embeddings with pp > 1 only (Megatron-LM's embedding group)
//
// What a step contains, per rank, in schedule order (parallel/schedule.hpp):
//  - per microbatch and chunk: receive (pp-recv), the layers' forward ops (workload/layer_ops.hpp,
//    names "mb{m}.L{l}.fwd.{op}", the embedding and head as "mb{m}.fwd.{op}"), send (pp-send); the
//    backward likewise, recompute included. Sends and receives are named "mb{m}[.c{chunk}].{fwd|bwd}.{send|recv}".
//  - data-parallel gradient reduction in buckets of --bucket-mb, filled in backward order, a parameter
//    tensor never split (as PyTorch DDP buckets): an all-reduce (ZeRO 0) or a reduce-scatter (ZeRO 1
//    and 2), each waiting for the op that completed the bucket's last gradient, so it overlaps the
//    rest of the backward. ZeRO 0 and 1 keep full gradients and reduce once, in the backward of the
//    last microbatch of each chunk ("dp.bucket{k}.*"); ZeRO 2 keeps only its shard so it reduces in
//    every microbatch ("mb{m}.dp.bucket{k}.reduce_scatter"). Reduce-scatter and all-gather buckets
//    are padded to a multiple of dp * 16 bytes so every shard is whole and aligned.
//  - ZeRO 3: per layer (and embedding, head) and microbatch, an all-gather of its parameters before
//    its forward and again before its backward ("...param_all_gather", prefetching at most one layer
//    ahead), and a reduce-scatter of its gradients after its backward ("...grad_reduce_scatter").
//  - end of step: with sequence parallelism, an all-reduce over tp of the replicated norm and bias
//    gradients; with tied embeddings and pp > 1, the embedding-gradient all-reduce; the optimizer
//    ("step.optimizer", over this rank's ZeRO shard); with ZeRO 1 and 2, the all-gathers of the
//    updated parameters, bucket by bucket ("step.bucket{k}.all_gather").

#include "parallel/plan.hpp"
#include "program/op.hpp"
#include "workload/transformer.hpp"

namespace commscale {

inline constexpr std::uint32_t kTpGroup = 0;
inline constexpr std::uint32_t kDpGroup = 1;
inline constexpr std::uint32_t kPpForwardGroup = 2;
inline constexpr std::uint32_t kPpBackwardGroup = 3;
inline constexpr std::uint32_t kEmbeddingGroup = 4;

// Validates the plan (InputError naming the flag) and builds the program of every rank.
[[nodiscard]] ProgramSet build_program(const TransformerConfig& m, const ParallelPlan& p);

// The op list of one pipeline stage (what build_program shares between that stage's ranks).
[[nodiscard]] std::vector<Op> build_stage_program(const TransformerConfig& m, const ParallelPlan& p, int stage);

}  // namespace commscale

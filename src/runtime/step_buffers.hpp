#pragma once

// Where each op of a step program reads and writes, in one device (or host) memory pool per rank.
//
// The pool is as large as the memory model says one rank of the plan holds (weights, gradients,
// optimizer states, activations of the microbatches in flight, logits, workspace): allocating it is
// what makes a plan that does not fit fail as a real job would. Every op then gets its operands as
// slices of the pool, placed one after another and wrapping around, so consecutive ops touch
// different memory (no op runs out of the previous op's cache lines) and operands of one op never
// overlap, but the optimizer's update, which works in place (its written slice starts its read one: a
// model's whole state, it would otherwise double the pool). GEMMs read their A and B from the pool's
// first part, which no op writes: what they multiply stays the pool's fill, values like a model's with
// both signs and random low bits. (A tensor core's speed depends on the bits it multiplies; when GEMMs
// read what earlier ops had written there, the memory kernels' stand-in arithmetic and the results of
// results left them 5-20% faster than on normal values: results/h200x1-2026-12-03c.) Every written
// operand is in the second part. GEMM A is the k x m weight-like operand, B the k x n input, C the m x n
// output (TN, as PyTorch's linear layers call cuBLAS); a memory kernel reads A and writes C; a collective
// or a point-to-point transfer works in place on C.
//
// Offload's ops also have a side in host memory (pinned on GPUs; the CPU backend's "device" pool is host memory
// too), in a second, smaller pool of twice the largest such side, placed the same way: a host copy (HostCopy)
// moves its bytes between C and its host slice; the host optimizer (MemoryKernelKind::kHostOptimizer) copies
// the gradient from A into its host slice and the updated weights from there into C.

#include <cstdint>
#include <vector>

#include "core/units.hpp"
#include "program/op.hpp"

namespace commscale {

struct Slice {
  std::uint64_t offset = 0;  // bytes from the start of the pool
  Bytes size;
};

struct OpBuffers {
  Slice a;
  Slice b;
  Slice c;
  Slice host;  // in the host pool: a host copy's or the host optimizer's host side (empty for other ops)
};

struct StepBuffers {
  Bytes pool;                       // bytes to allocate
  Bytes modelled;                   // what the memory model says the rank holds
  Bytes largest_op;                 // the most one op needs at once, in either part of the pool
  Bytes gemm_inputs;                // the pool's first bytes, where GEMMs read and nothing writes
  std::vector<OpBuffers> operands;  // by op id
  Bytes host_pool;                  // host memory for offload's ops; 0 where the program has none
};

// The bytes an op needs in host memory: a host copy's, the larger of the host optimizer's two copies, else 0.
[[nodiscard]] Bytes host_side_bytes(const Op& op) noexcept;

// The bytes a GEMM's operands and result take with `element` bytes per element (0: the GEMM's type).
[[nodiscard]] Bytes gemm_a_bytes(const Gemm& g, std::size_t element = 0) noexcept;
[[nodiscard]] Bytes gemm_b_bytes(const Gemm& g, std::size_t element = 0) noexcept;
[[nodiscard]] Bytes gemm_c_bytes(const Gemm& g, std::size_t element = 0) noexcept;

// One GEMM's A, B and C placed one after the other, each at an `alignment` boundary: where B and C
// start, and the bytes the three take.
struct GemmOperandLayout {
  std::uint64_t b_at = 0;
  std::uint64_t c_at = 0;
  std::uint64_t bytes = 0;
};
[[nodiscard]] GemmOperandLayout gemm_operand_layout(const Gemm& g, std::uint64_t alignment = 256) noexcept;

// Places the operands of `ops` in a pool of max(modelled, 2 x the largest op but the optimizer's update, the
// largest GEMM's A and B + the largest written side) bytes, slices aligned to `alignment` bytes. `gemm_element`
// overrides the GEMMs' element size (the CPU engine computes in fp32).
[[nodiscard]] StepBuffers place_step_buffers(const std::vector<Op>& ops, Bytes modelled, std::size_t gemm_element = 0,
                                             std::uint64_t alignment = 256);

}  // namespace commscale

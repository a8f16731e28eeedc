#pragma once

// How the executor lays out a GEMM's matrices in memory (runtime/cuda/cublaslt_gemm.cpp). A Gemm computes
// C[m x n] = A^T B with A k x m and B k x n; each of the three is column-major with one of its two dimensions
// as its leading one. cuBLASLt's tensor-core kernels want every leading dimension a multiple of 16 bytes: a
// leading dimension of 273 bf16 values (like the 274 rows each of Qwen1.5-MoE's 60 experts gets at top 4) made
// a layer's GEMMs 2.4x (median) to 5.6x slower on an H100 than 272 (results/gpu1-2026-12-07-gemm-align). A framework
// never has the tokens as a leading dimension: PyTorch stores activations token-major (the hidden size leading) and
// picks its calls' transposes to match (forward TN, dgrad NN, wgrad NT). So here:
//
//  - each matrix leads with the GEMM's usual dimension (k for A and B, m for C: the TN call) when that one is a
//    multiple of 16 bytes or the other is not; else with the other (A with m, B with n, C with n), which is how
//    the token count (m forward and dgrad, k in the wgrad) stays out of the leading dimensions;
//  - an FP8 GEMM keeps the TN call (Hopper's and Ada's FP8 GEMMs run TN only); its dimensions are multiples
//    of 16 already, as TransformerEngine pads them (workload/fp8_ops.hpp).
//
// A GEMM whose dimensions are all multiples of 16 bytes is laid out as before: the TN call.

#include <cstdint>

#include "program/op.hpp"

namespace commscale {

struct GemmStorage {
  bool a_leads_with_k = true;  // A stored k x m (leading dimension k), else m x k (leading m)
  bool b_leads_with_k = true;  // B stored k x n (leading k), else n x k (leading n)
  bool c_leads_with_m = true;  // C stored m x n (leading m), else n x m (leading n)

  friend bool operator==(const GemmStorage&, const GemmStorage&) = default;
};

// Whether `count` values of `type` span a multiple of 16 bytes (what cuBLASLt's fast kernels load at once).
[[nodiscard]] bool aligned_leading_dimension(std::int64_t count, DataType type) noexcept;

// The layout the executor gives `g` (the header's rules).
[[nodiscard]] GemmStorage gemm_storage(const Gemm& g) noexcept;

}  // namespace commscale

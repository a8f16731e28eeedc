#pragma once

// GEMMs at exact shapes through cuBLASLt: C[m x n] = A^T B with A k x m and B k x n, column major, laid out as
// program/gemm_storage.hpp says (the "TN" call PyTorch's linear layers make forward; where the token count
// is a dimension that is no multiple of 16 bytes, the transposes that keep it from leading, as PyTorch's
// token-major tensors do), strided-batched when batch > 1. One plan per
// distinct shape and type: descriptors, layouts and the heuristic's best algorithm, made once. FP8 GEMMs
// (Gemm::dtype E4M3 or E5M2, sm_89 and later): inputs of the two FP8 types, fp32 accumulate, bf16 output.

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <map>
#include <tuple>

#include "program/op.hpp"

namespace commscale {

class CublasLtGemm {
 public:
  // `tf32`: fp32 GEMMs run on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32).
  CublasLtGemm(bool tf32, std::size_t workspace_bytes = 32ull << 20);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  void run(const Gemm& g, const void* a, const void* b, void* c, cudaStream_t stream);
  // The name of the compute mode a GEMM of this type runs in ("bf16 x bf16 -> bf16, fp32 accumulate").
  [[nodiscard]] std::string describe(const Gemm& g) const;

 private:
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr;  // the call's first operand: A, or B where swap_operands
    cublasLtMatrixLayout_t b = nullptr;
    cublasLtMatrixLayout_t c = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool swap_operands = false;  // C^T = B^T A: C stored n x m
    // alpha = 2^scale_exponent, near 2 / sqrt(k) (run): found once, not per call.
    int scale_exponent = 0;
  };
  using Key =
      std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, DataType, DataType, DataType, DataType>;
  Plan& plan_for(const Gemm& g);

  bool tf32_;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  float* unit_scale_ = nullptr;  // device memory: 1.0f, the FP8 inputs' scale
  std::size_t workspace_bytes_;
  std::map<Key, Plan> plans_;
};

}  // namespace commscale

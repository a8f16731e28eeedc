#include "runtime/cuda/cublaslt_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "program/gemm_storage.hpp"
#include "runtime/cuda/checks.hpp"
#include "runtime/cuda/cublaslt_library.hpp"

namespace commscale {
namespace {

cudaDataType_t cuda_type(DataType t) {
  switch (t) {
    case DataType::kFloat16: return CUDA_R_16F;
    case DataType::kBFloat16: return CUDA_R_16BF;
    case DataType::kFloat32: return CUDA_R_32F;
    case DataType::kFloat64: return CUDA_R_64F;
    case DataType::kInt8: return CUDA_R_8I;
    case DataType::kInt32: return CUDA_R_32I;
    case DataType::kFp8E4M3:
      return CUDA_R_8F_E4M3;
    case DataType::kFp8E5M2:
      return CUDA_R_8F_E5M2;
  }
  return CUDA_R_32F;
}

// The compute type and the type of alpha and beta for a GEMM's input and accumulate types.
std::pair<cublasComputeType_t, cudaDataType_t> compute_of(const Gemm& g, bool tf32) {
  if (g.dtype == DataType::kFloat64) return {CUBLAS_COMPUTE_64F, CUDA_R_64F};
  if (g.accumulate == DataType::kFloat16) return {CUBLAS_COMPUTE_16F, CUDA_R_16F};
  if (g.dtype == DataType::kFloat32 && tf32) return {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F};
  return {CUBLAS_COMPUTE_32F, CUDA_R_32F};
}

cublasLtMatrixLayout_t layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t batch) {
  cublasLtMatrixLayout_t l = nullptr;
  CUBLAS_CHECK(cublaslt().matrix_layout_create(&l, type, static_cast<std::uint64_t>(rows),
                                               static_cast<std::uint64_t>(cols), rows));
  if (batch > 1) {
    const auto count = static_cast<std::int32_t>(batch);
    const std::int64_t stride = rows * cols;
    CUBLAS_CHECK(cublaslt().matrix_layout_set_attribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    CUBLAS_CHECK(cublaslt().matrix_layout_set_attribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                        sizeof(stride)));
  }
  return l;
}

}  // namespace

CublasLtGemm::CublasLtGemm(bool tf32, std::size_t workspace_bytes) : tf32_(tf32), workspace_bytes_(workspace_bytes) {
  CUBLAS_CHECK(cublaslt().create(&handle_));
  CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
  // The FP8 GEMMs' scale (a device fp32, as cuBLASLt takes it): 1.0, set once.
  CUDA_CHECK(cudaMalloc(&unit_scale_, sizeof(float)));
  const float one = 1.0f;
  CUDA_CHECK(cudaMemcpy(unit_scale_, &one, sizeof(one), cudaMemcpyHostToDevice));
}

CublasLtGemm::~CublasLtGemm() {
  for (auto& [key, p] : plans_) {
    cublaslt().matrix_layout_destroy(p.a);
    cublaslt().matrix_layout_destroy(p.b);
    cublaslt().matrix_layout_destroy(p.c);
    cublaslt().matmul_desc_destroy(p.op);
  }
  CUDA_CHECK_NOTHROW(cudaFree(workspace_));
  CUDA_CHECK_NOTHROW(cudaFree(unit_scale_));
  cublaslt().destroy(handle_);
}

CublasLtGemm::Plan& CublasLtGemm::plan_for(const Gemm& g) {
  const Key key{g.m, g.n, g.k, g.batch, g.dtype, gemm_b_type(g), gemm_out_type(g), g.accumulate};
  if (const auto it = plans_.find(key); it != plans_.end()) return it->second;
  Plan p;
  const auto [compute, scale] = compute_of(g, tf32_);
  CUBLAS_CHECK(cublaslt().matmul_desc_create(&p.op, compute, scale));
  // The call's operands and transposes for the layout gemm_storage picks: C stored m x n is A^T B as the
  // call's (m, n, k); C stored n x m is C^T = B^T A, the call's (n, m, k) with the operands swapped.
  const GemmStorage s = gemm_storage(g);
  p.swap_operands = !s.c_leads_with_m;
  const auto [first_type, second_type] =
      p.swap_operands ? std::pair{gemm_b_type(g), g.dtype} : std::pair{g.dtype, gemm_b_type(g)};
  const auto [rows, cols] = p.swap_operands ? std::pair{g.n, g.m} : std::pair{g.m, g.n};
  // The call's first operand must give a rows x k product input: stored k x rows it is transposed.
  const bool first_leads_with_k = p.swap_operands ? s.b_leads_with_k : s.a_leads_with_k;
  const bool second_leads_with_k = p.swap_operands ? s.a_leads_with_k : s.b_leads_with_k;
  const cublasOperation_t transa = first_leads_with_k ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t transb = second_leads_with_k ? CUBLAS_OP_N : CUBLAS_OP_T;
  CUBLAS_CHECK(cublaslt().matmul_desc_set_attribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  CUBLAS_CHECK(cublaslt().matmul_desc_set_attribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  if (is_fp8(g.dtype)) {
    // FP8 (cuBLASLt's rules: TN only, as gemm_storage keeps it; fp32 compute and scale type; C and D bf16): the
    // per-tensor scales TransformerEngine passes, here 1.0 (set_fp8_scales).
    for (const auto attribute : {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER}) {
      CUBLAS_CHECK(cublaslt().matmul_desc_set_attribute(p.op, attribute, &unit_scale_, sizeof(unit_scale_)));
    }
  }
  p.a = first_leads_with_k ? layout(cuda_type(first_type), g.k, rows, g.batch)
                           : layout(cuda_type(first_type), rows, g.k, g.batch);
  p.b = second_leads_with_k ? layout(cuda_type(second_type), g.k, cols, g.batch)
                            : layout(cuda_type(second_type), cols, g.k, g.batch);
  p.c = layout(cuda_type(gemm_out_type(g)), rows, cols, g.batch);
  cublasLtMatmulPreference_t preference = nullptr;
  CUBLAS_CHECK(cublaslt().matmul_preference_create(&preference));
  CUBLAS_CHECK(cublaslt().matmul_preference_set_attribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes_, sizeof(workspace_bytes_)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublaslt().matmul_algo_get_heuristic(handle_, p.op, p.a, p.b, p.c, p.c, preference, 1, &result, &found);
  cublaslt().matmul_preference_destroy(preference);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    throw RuntimeFailure(fmt::format("cuBLASLt has no algorithm for the GEMM m={} n={} k={} batch={} {} on {}", g.m,
                                     g.n, g.k, g.batch, describe(g), process_identity()));
  }
  p.algo = result.algo;
  const double log2_k = std::log2(static_cast<double>(std::max<std::int64_t>(g.k, 1)));
  p.scale_exponent = std::clamp(1 - static_cast<int>(std::lround(log2_k / 2.0)), -14, 0);
  return plans_.emplace(key, p).first->second;
}

void CublasLtGemm::run(const Gemm& g, const void* a, const void* b, void* c, cudaStream_t stream) {
  Plan& p = plan_for(g);
  // alpha = 2^e near 2 / sqrt(k), beta = 0, in the scale type (fp16 for fp16 accumulate, fp64 for fp64,
  // else fp32). A sum of k products of values with random signs grows as sqrt(k): scaled so, a step's
  // activations keep a model's magnitudes layer after layer instead of growing without bound; a tensor
  // core multiplies degenerate bits (inf, NaN, zeros, one repeated value) with less power, so faster
  // (results/h200x1-2026-12-03b). A power of two is exact in every scale type.
  const int e = p.scale_exponent;
  const double alpha64 = std::ldexp(1.0, e);
  const double zero64 = 0.0;
  const auto alpha32 = static_cast<float>(alpha64);
  const float zero32 = 0.0f;
  const auto alpha16 = static_cast<std::uint16_t>((e + 15) << 10);  // fp16: sign 0, exponent e + 15, mantissa 0
  const std::uint16_t zero16 = 0;
  const cudaDataType_t scale = compute_of(g, tf32_).second;
  const void* alpha = scale == CUDA_R_64F ? static_cast<const void*>(&alpha64)
                      : scale == CUDA_R_16F ? static_cast<const void*>(&alpha16)
                                            : static_cast<const void*>(&alpha32);
  const void* beta = scale == CUDA_R_64F ? static_cast<const void*>(&zero64)
                     : scale == CUDA_R_16F ? static_cast<const void*>(&zero16)
                                           : static_cast<const void*>(&zero32);
  const void* first = p.swap_operands ? b : a;
  const void* second = p.swap_operands ? a : b;
  CUBLAS_CHECK(cublaslt().matmul(handle_, p.op, alpha, first, p.a, second, p.b, beta, c, p.c, c, p.c, &p.algo,
                                 workspace_, workspace_bytes_, stream));
}

std::string CublasLtGemm::describe(const Gemm& g) const {
  const std::string type(name(g.dtype));
  if (g.dtype == DataType::kFloat32) return tf32_ ? "fp32 on TF32 tensor cores" : "fp32";
  if (is_fp8(g.dtype)) {
    return fmt::format("{} x {} -> {}, {} accumulate (FP8 tensor cores)", type, name(g.b_dtype), name(g.out_dtype),
                       name(g.accumulate));
  }
  return fmt::format("{} x {} -> {}, {} accumulate", type, type, type, name(g.accumulate));
}

}  // namespace commscale

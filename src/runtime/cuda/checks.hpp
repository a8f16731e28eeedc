#pragma once

// Check macros for CUDA, NCCL and cuBLAS: each throws RuntimeFailure with the expression, the
// library's error string, file:line, host and rank. The _NOTHROW forms print instead (destructors).

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "runtime/cuda/cublaslt_library.hpp"
#include "runtime/process.hpp"

#define CUDA_CHECK(expr)                                                                                       \
  do {                                                                                                         \
    const cudaError_t cuda_check_rc_ = (expr);                                                                 \
    if (cuda_check_rc_ != cudaSuccess)                                                                         \
      ::commscale::throw_library_error("CUDA", #expr, cudaGetErrorString(cuda_check_rc_), __FILE__, __LINE__); \
  } while (0)

#define CUDA_CHECK_NOTHROW(expr)                                                                             \
  do {                                                                                                       \
    const cudaError_t cuda_check_rc_ = (expr);                                                               \
    if (cuda_check_rc_ != cudaSuccess)                                                                       \
      ::commscale::report_library_error_nothrow("CUDA", #expr, cudaGetErrorString(cuda_check_rc_), __FILE__, \
                                                __LINE__);                                                   \
  } while (0)

#define NCCL_CHECK(expr)                                                                                             \
  do {                                                                                                               \
    const ncclResult_t nccl_check_rc_ = (expr);                                                                      \
    if (nccl_check_rc_ != ncclSuccess && nccl_check_rc_ != ncclInProgress)                                           \
      ::commscale::throw_library_error("NCCL", #expr, ::commscale::nccl_error_text(nccl_check_rc_), __FILE__, __LINE__); \
  } while (0)

#define NCCL_CHECK_NOTHROW(expr)                                                                       \
  do {                                                                                                 \
    const ncclResult_t nccl_check_rc_ = (expr);                                                        \
    if (nccl_check_rc_ != ncclSuccess && nccl_check_rc_ != ncclInProgress)                             \
      ::commscale::report_library_error_nothrow("NCCL", #expr, ncclGetErrorString(nccl_check_rc_), __FILE__, \
                                                __LINE__);                                             \
  } while (0)

#define CUBLAS_CHECK(expr)                                                                          \
  do {                                                                                              \
    const cublasStatus_t cublas_check_rc_ = (expr);                                                 \
    if (cublas_check_rc_ != CUBLAS_STATUS_SUCCESS)                                                  \
      ::commscale::throw_library_error("cuBLAS", #expr,                                             \
                                       ::commscale::cublaslt().get_status_string(cublas_check_rc_), \
                                       __FILE__, __LINE__);                                         \
  } while (0)

namespace commscale {

// NCCL's error string with its last detailed message (ncclGetLastError), which names the cause.
[[nodiscard]] std::string nccl_error_text(ncclResult_t result);

}  // namespace commscale

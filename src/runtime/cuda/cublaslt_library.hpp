#pragma once

// cuBLASLt, loaded with dlopen on its first use rather than linked: the library is over 500 MB and the
// dynamic loader's relocation of it cost every commscale command 220 MB of memory and half a second of CPU
// at start, predict and search included, which never run a GEMM (results/search-bench, 2026-12-07). The
// entry points the executor calls, resolved once; a library that cannot be loaded or lacks one is a
// RuntimeFailure naming the file and the symbol.

#include <cublasLt.h>

#include <string>

namespace commscale {

struct CublasLtApi {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetVersion) get_version;
  decltype(&cublasLtGetStatusString) get_status_string;
  decltype(&cublasLtMatmul) matmul;
  decltype(&cublasLtMatmulAlgoGetHeuristic) matmul_algo_get_heuristic;
  decltype(&cublasLtMatmulDescCreate) matmul_desc_create;
  decltype(&cublasLtMatmulDescDestroy) matmul_desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute;
  decltype(&cublasLtMatmulPreferenceCreate) matmul_preference_create;
  decltype(&cublasLtMatmulPreferenceDestroy) matmul_preference_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) matmul_preference_set_attribute;
  decltype(&cublasLtMatrixLayoutCreate) matrix_layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) matrix_layout_destroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) matrix_layout_set_attribute;
  std::string file;  // what was loaded: the soname of the toolkit built against, or its path in the toolkit
};

// Loads the library on the first call (thread-safe), after that returns the same table.
[[nodiscard]] const CublasLtApi& cublaslt();

}  // namespace commscale

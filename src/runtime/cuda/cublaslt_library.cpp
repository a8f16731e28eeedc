#include "runtime/cuda/cublaslt_library.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "runtime/process.hpp"

namespace commscale {
namespace {

// The soname of the toolkit's major version (libcublasLt.so.13), through the loader's search path; then
// the toolkit's library folder of the build (COMMSCALE_CUBLASLT_DIR), where the linked library was found.
void* open_library(std::string* file, std::string* why) {
  const std::string soname = fmt::format("libcublasLt.so.{}", CUBLAS_VER_MAJOR);
  for (const std::string& candidate : {soname, std::string(COMMSCALE_CUBLASLT_DIR) + "/" + soname}) {
    if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      *file = candidate;
      return handle;
    }
    const char* error = dlerror();
    *why += fmt::format("{}{}", why->empty() ? "" : "; ", error != nullptr ? error : candidate + ": not found");
  }
  return nullptr;
}

template <typename F>
void resolve(void* handle, const char* name, const std::string& file, F* out) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) {
    const std::string expr = fmt::format("dlsym({})", name);
    throw_library_error("cuBLAS", expr.c_str(), fmt::format("{} has no {}", file, name), __FILE__, __LINE__);
  }
  *out = reinterpret_cast<F>(symbol);
}

CublasLtApi load() {
  CublasLtApi api;
  std::string why;
  void* handle = open_library(&api.file, &why);
  if (handle == nullptr) {
    throw_library_error("cuBLAS", "dlopen(libcublasLt)", fmt::format("cuBLASLt could not be loaded: {}", why), __FILE__,
                        __LINE__);
  }
  // The handle stays open for the process's life: the GEMMs' plans hold the library's objects.
  resolve(handle, "cublasLtCreate", api.file, &api.create);
  resolve(handle, "cublasLtDestroy", api.file, &api.destroy);
  resolve(handle, "cublasLtGetVersion", api.file, &api.get_version);
  resolve(handle, "cublasLtGetStatusString", api.file, &api.get_status_string);
  resolve(handle, "cublasLtMatmul", api.file, &api.matmul);
  resolve(handle, "cublasLtMatmulAlgoGetHeuristic", api.file, &api.matmul_algo_get_heuristic);
  resolve(handle, "cublasLtMatmulDescCreate", api.file, &api.matmul_desc_create);
  resolve(handle, "cublasLtMatmulDescDestroy", api.file, &api.matmul_desc_destroy);
  resolve(handle, "cublasLtMatmulDescSetAttribute", api.file, &api.matmul_desc_set_attribute);
  resolve(handle, "cublasLtMatmulPreferenceCreate", api.file, &api.matmul_preference_create);
  resolve(handle, "cublasLtMatmulPreferenceDestroy", api.file, &api.matmul_preference_destroy);
  resolve(handle, "cublasLtMatmulPreferenceSetAttribute", api.file, &api.matmul_preference_set_attribute);
  resolve(handle, "cublasLtMatrixLayoutCreate", api.file, &api.matrix_layout_create);
  resolve(handle, "cublasLtMatrixLayoutDestroy", api.file, &api.matrix_layout_destroy);
  resolve(handle, "cublasLtMatrixLayoutSetAttribute", api.file, &api.matrix_layout_set_attribute);
  return api;
}

}  // namespace

const CublasLtApi& cublaslt() {
  static const CublasLtApi api = load();
  return api;
}

}  // namespace commscale

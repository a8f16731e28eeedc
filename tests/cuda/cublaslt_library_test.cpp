// cuBLASLt is loaded on its first use, not at start (runtime/cuda/cublaslt_library.hpp). Runs without a GPU:
// loading the library and asking its version need no device.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "runtime/cuda/cublaslt_library.hpp"

namespace commscale {
namespace {

bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream all;
  all << maps.rdbuf();
  return all.str().find(name) != std::string::npos;
}

// First in this file (GoogleTest runs a file's tests in order): nothing before it has used cuBLASLt.
TEST(CublasLtLibrary, NotLoadedAtStart) { EXPECT_FALSE(mapped("libcublasLt")); }

TEST(CublasLtLibrary, LoadsOnFirstUseWithEveryEntryPoint) {
  const CublasLtApi& api = cublaslt();
  EXPECT_TRUE(mapped("libcublasLt"));
  EXPECT_NE(api.file.find("libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR)), std::string::npos) << api.file;
  // cublasLtGetVersion: major * 10000 + minor * 100 + patch, the major of the headers built against.
  EXPECT_EQ(api.get_version() / 10000, static_cast<std::size_t>(CUBLAS_VER_MAJOR));
  const char* text = api.get_status_string(CUBLAS_STATUS_NOT_INITIALIZED);  // its wording varies by release
  ASSERT_NE(text, nullptr);
  EXPECT_GT(std::string(text).size(), 0u);
  for (const void* f :
       {reinterpret_cast<const void*>(api.create), reinterpret_cast<const void*>(api.destroy),
        reinterpret_cast<const void*>(api.matmul), reinterpret_cast<const void*>(api.matmul_algo_get_heuristic),
        reinterpret_cast<const void*>(api.matmul_desc_create), reinterpret_cast<const void*>(api.matmul_desc_destroy),
        reinterpret_cast<const void*>(api.matmul_desc_set_attribute),
        reinterpret_cast<const void*>(api.matmul_preference_create),
        reinterpret_cast<const void*>(api.matmul_preference_destroy),
        reinterpret_cast<const void*>(api.matmul_preference_set_attribute),
        reinterpret_cast<const void*>(api.matrix_layout_create),
        reinterpret_cast<const void*>(api.matrix_layout_destroy),
        reinterpret_cast<const void*>(api.matrix_layout_set_attribute)}) {
    EXPECT_NE(f, nullptr);
  }
  EXPECT_EQ(&cublaslt(), &api);  // loaded once
}

}  // namespace
}  // namespace commscale

// The executor's bf16 GEMMs (runtime/cuda/cublaslt_gemm.hpp) at dimensions that are no multiple of 8 compute
// C = A^T B in the layout program/gemm_storage.hpp gives them: the operands are written as that layout says,
// the product read back as it says, and compared with the product computed on the host. The three GEMMs of an
// expert's linear layer at 273 rows (forward, dgrad, wgrad: three different layouts), batched, and an aligned
// one (the TN call). A wrong transpose or leading dimension gives results far off. Skips without a GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/dtype.hpp"
#include "program/gemm_storage.hpp"
#include "runtime/cuda/checks.hpp"
#include "runtime/cuda/cublaslt_gemm.hpp"
#include "runtime/cuda/device_memory.hpp"
#include "runtime/gpu.hpp"

namespace commscale {
namespace {

// Offsets of element (row, col) of a logical rows x cols matrix of batch entry `b`, stored with its rows
// leading (column-major, leading dimension rows) or its columns leading.
std::size_t offset(std::int64_t row, std::int64_t col, std::int64_t b, std::int64_t rows, std::int64_t cols,
                   bool rows_lead) {
  const std::int64_t within = rows_lead ? row + col * rows : col + row * cols;
  return static_cast<std::size_t>(within + b * rows * cols);
}

void check_layout(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, const GemmStorage& expected) {
  std::string why;
  if (visible_gpu_count(&why) == 0) GTEST_SKIP() << why;
  CUDA_CHECK(cudaSetDevice(0));
  const Gemm g = make_gemm(m, n, k, batch, DataType::kBFloat16);
  const GemmStorage s = gemm_storage(g);
  ASSERT_EQ(s, expected);
  // Small integers: exact in bf16, their products' sums exact in fp32.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> value(-2, 2);
  std::vector<float> a(static_cast<std::size_t>(k * m * batch));  // logical A[kk][i], k x m
  std::vector<float> b(static_cast<std::size_t>(k * n * batch));  // logical B[kk][j], k x n
  std::vector<std::uint16_t> a16(a.size());
  std::vector<std::uint16_t> b16(b.size());
  for (std::int64_t e = 0; e < batch; ++e) {
    for (std::int64_t kk = 0; kk < k; ++kk) {
      for (std::int64_t i = 0; i < m; ++i) {
        const auto v = static_cast<float>(value(rng));
        a[offset(kk, i, e, k, m, true)] = v;
        a16[offset(kk, i, e, k, m, s.a_leads_with_k)] = float_to_bf16(v);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        const auto v = static_cast<float>(value(rng));
        b[offset(kk, j, e, k, n, true)] = v;
        b16[offset(kk, j, e, k, n, s.b_leads_with_k)] = float_to_bf16(v);
      }
    }
  }
  const auto upload = [](const std::vector<std::uint16_t>& host, const char* what) {
    DeviceMemory d(0, Bytes(host.size() * 2), what);
    CUDA_CHECK(cudaMemcpy(d.data(), host.data(), host.size() * 2, cudaMemcpyHostToDevice));
    return d;
  };
  const DeviceMemory da = upload(a16, "A");
  const DeviceMemory db = upload(b16, "B");
  const std::size_t c_count = static_cast<std::size_t>(m * n * batch);
  const DeviceMemory dc(0, Bytes(c_count * 2), "C");
  CublasLtGemm gemm(false);
  gemm.run(g, da.data(), db.data(), dc.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint16_t> c16(c_count);
  CUDA_CHECK(cudaMemcpy(c16.data(), dc.data(), c_count * 2, cudaMemcpyDeviceToHost));

  // run() scales by alpha = 2^e, e = 1 - round(log2(k) / 2) (cublaslt_gemm.cpp): exact, as the bf16 outputs of
  // these sums are within one rounding.
  const double alpha = std::ldexp(1.0, std::clamp(1 - static_cast<int>(std::lround(std::log2(k) / 2.0)), -14, 0));
  std::size_t off = 0;
  for (std::int64_t e = 0; e < batch; ++e) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (std::int64_t kk = 0; kk < k; ++kk) {
          sum += static_cast<double>(a[offset(kk, i, e, k, m, true)]) * b[offset(kk, j, e, k, n, true)];
        }
        const double got = bf16_to_float(c16[offset(i, j, e, m, n, s.c_leads_with_m)]);
        if (!(std::abs(got - alpha * sum) <= std::abs(alpha * sum) / 128 + 1e-6)) ++off;
      }
    }
  }
  EXPECT_EQ(off, 0u) << m << " x " << n << " x " << k << " (batch " << batch << "): " << off << " of " << c_count
                     << " outputs off the host's product";
}

TEST(GpuGemmLayout, AlignedGemmIsTheTnCall) { check_layout(64, 96, 48, 2, {true, true, true}); }
TEST(GpuGemmLayout, ExpertForwardAt273Rows) { check_layout(273, 96, 64, 3, {true, true, false}); }
TEST(GpuGemmLayout, ExpertWeightGradientAt273Rows) { check_layout(64, 96, 273, 3, {false, false, true}); }
TEST(GpuGemmLayout, NothingAlignedKeepsTheTnCall) { check_layout(33, 35, 37, 2, {true, true, true}); }

}  // namespace
}  // namespace commscale

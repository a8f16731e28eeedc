// The executor's cuBLASLt FP8 GEMMs (runtime/cuda/cublaslt_gemm.hpp) at Llama 2 7B's shapes compute what a
// bf16 GEMM of the same values computes: the FP8 bytes are drawn at random, decoded on the host and given
// to a bf16 GEMM as the reference (every E4M3 and E5M2 value of the range drawn is exact in bf16), so the
// two GEMMs multiply the same numbers with fp32 accumulate and differ only by the order of their sums and
// the bf16 rounding of the output. A wrong layout, a wrong type or scale, or an unset scale pointer gives
// results far off. Skips without a GPU, and on a GPU without FP8 tensor cores (before compute capability 8.9).
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/dtype.hpp"
#include "runtime/cuda/checks.hpp"
#include "runtime/cuda/cublaslt_gemm.hpp"
#include "runtime/cuda/device_memory.hpp"
#include "runtime/gpu.hpp"

namespace commscale {
namespace {

// A random FP8 byte of `type` whose value lies in [1/4, 4) in magnitude, with either sign: E4M3 exponent
// bias 7, three mantissa bits; E5M2 bias 15, two.
std::uint8_t random_fp8(DataType type, std::mt19937& rng) {
  const bool e4m3 = type == DataType::kFp8E4M3;
  const int mantissa_bits = e4m3 ? 3 : 2;
  const int bias = e4m3 ? 7 : 15;
  std::uniform_int_distribution<int> exponent(bias - 2, bias + 1);
  std::uniform_int_distribution<int> mantissa(0, (1 << mantissa_bits) - 1);
  std::uniform_int_distribution<int> sign(0, 1);
  return static_cast<std::uint8_t>((sign(rng) << 7) | (exponent(rng) << mantissa_bits) | mantissa(rng));
}

// The value of a normal FP8 byte (all random_fp8 draws).
float fp8_value(DataType type, std::uint8_t bits) {
  const bool e4m3 = type == DataType::kFp8E4M3;
  const int mantissa_bits = e4m3 ? 3 : 2;
  const int bias = e4m3 ? 7 : 15;
  const int exponent = (bits & 0x7F) >> mantissa_bits;
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  const float magnitude =
      std::ldexp(1.0f + static_cast<float>(mantissa) / static_cast<float>(1 << mantissa_bits), exponent - bias);
  return (bits & 0x80) != 0 ? -magnitude : magnitude;
}

struct Operand {
  std::vector<std::uint8_t> fp8;
  std::vector<std::uint16_t> bf16;  // the same values
};

Operand random_operand(DataType type, std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Operand o;
  o.fp8.resize(count);
  o.bf16.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    o.fp8[i] = random_fp8(type, rng);
    o.bf16[i] = float_to_bf16(fp8_value(type, o.fp8[i]));
  }
  return o;
}

template <typename T>
DeviceMemory upload(const std::vector<T>& host, const char* what) {
  DeviceMemory d(0, Bytes(host.size() * sizeof(T)), what);
  CUDA_CHECK(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

std::vector<std::uint16_t> download(const DeviceMemory& d, std::size_t count) {
  std::vector<std::uint16_t> host(count);
  CUDA_CHECK(cudaMemcpy(host.data(), d.data(), count * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
  return host;
}

// Runs C = A^T B at m x n x k with A of type `a_type`, B of `b_type` (FP8) and the bf16 reference, and
// compares them.
void check_fp8_gemm(std::int64_t m, std::int64_t n, std::int64_t k, DataType a_type, DataType b_type) {
  std::string why;
  if (visible_gpu_count(&why) == 0) GTEST_SKIP() << why;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major * 10 + prop.minor < 89) {
    GTEST_SKIP() << prop.name << " (compute capability " << prop.major << "." << prop.minor
                 << ") has no FP8 tensor cores";
  }
  CUDA_CHECK(cudaSetDevice(0));
  const auto a_count = static_cast<std::size_t>(k * m);
  const auto b_count = static_cast<std::size_t>(k * n);
  const auto c_count = static_cast<std::size_t>(m * n);
  const Operand a = random_operand(a_type, a_count, 1);
  const Operand b = random_operand(b_type, b_count, 2);

  const Gemm reference = make_gemm(m, n, k, 1, DataType::kBFloat16);
  const Gemm fp8 = fp8_gemm(reference, a_type, b_type, DataType::kBFloat16);
  ASSERT_TRUE(is_fp8(fp8.dtype));
  const DeviceMemory a8 = upload(a.fp8, "A fp8");
  const DeviceMemory b8 = upload(b.fp8, "B fp8");
  const DeviceMemory a16 = upload(a.bf16, "A bf16");
  const DeviceMemory b16 = upload(b.bf16, "B bf16");
  const DeviceMemory c8(0, Bytes(c_count * 2), "C of the FP8 GEMM");
  const DeviceMemory c16(0, Bytes(c_count * 2), "C of the bf16 GEMM");
  CublasLtGemm gemm(false);
  gemm.run(fp8, a8.data(), b8.data(), c8.data(), nullptr);
  gemm.run(reference, a16.data(), b16.data(), c16.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> got = download(c8, c_count);
  const std::vector<std::uint16_t> want = download(c16, c_count);

  double sum_squares = 0.0;
  for (std::uint16_t w : want) sum_squares += static_cast<double>(bf16_to_float(w)) * bf16_to_float(w);
  const double rms = std::sqrt(sum_squares / static_cast<double>(c_count));
  ASSERT_GT(rms, 0.0) << "the bf16 reference is all zeros";
  // Both outputs are the same fp32 sums rounded to bf16 (relative 2^-8): up to two bf16 steps apart, plus
  // the sums' order (far below that).
  std::size_t off = 0;
  double worst = 0.0;
  for (std::size_t i = 0; i < c_count; ++i) {
    const double g = bf16_to_float(got[i]);
    const double w = bf16_to_float(want[i]);
    const double error = std::abs(g - w);
    if (!std::isfinite(g) || error > 1.0 / 64 * std::abs(w) + 1e-3 * rms) ++off;
    if (std::isfinite(g)) worst = std::max(worst, error / rms);
  }
  EXPECT_EQ(off, 0u) << gemm.describe(fp8) << " at " << m << " x " << n << " x " << k << ": " << off << " of "
                     << c_count << " outputs off the bf16 reference; worst error " << worst << " x rms " << rms;
}

// Llama 2 7B (hidden 4096, MLP 11008, 4096 tokens a microbatch): qkv's forward (E4M3 activations x E4M3
// weights) and fc2's dgrad (E5M2 output gradient x E4M3 weights), as TransformerEngine's hybrid format runs
// them (workload/fp8_ops.hpp).
TEST(GpuFp8Gemm, QkvForwardE4M3MatchesBf16) {
  check_fp8_gemm(4096, 12288, 4096, DataType::kFp8E4M3, DataType::kFp8E4M3);
}

TEST(GpuFp8Gemm, Fc2DgradE5M2MatchesBf16) { check_fp8_gemm(4096, 11008, 4096, DataType::kFp8E5M2, DataType::kFp8E4M3); }

}  // namespace
}  // namespace commscale

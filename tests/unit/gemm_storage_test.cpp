// How the executor lays out a GEMM (program/gemm_storage.hpp): the TN call where every leading dimension is a
// multiple of 16 bytes, and the token count kept out of the leading dimensions where it is not, as
// PyTorch's token-major tensors keep it: the three GEMMs of an expert's linear layer at 273 rows.
#include <gtest/gtest.h>

#include "program/gemm_storage.hpp"

namespace commscale {
namespace {

constexpr GemmStorage kTn{true, true, true};

TEST(GemmStorage, AlignedGemmsKeepTheTnCall) {
  EXPECT_EQ(gemm_storage(make_gemm(4096, 12288, 4096, 1, DataType::kBFloat16)), kTn);
  EXPECT_EQ(gemm_storage(make_gemm(272, 2816, 2048, 60, DataType::kBFloat16)), kTn);
  // fp32 needs a multiple of 4 values, bf16 of 8.
  EXPECT_EQ(gemm_storage(make_gemm(12, 20, 36, 1, DataType::kFloat32)), kTn);
  EXPECT_FALSE(aligned_leading_dimension(12, DataType::kBFloat16));
  EXPECT_TRUE(aligned_leading_dimension(12, DataType::kFloat32));
  EXPECT_TRUE(aligned_leading_dimension(16, DataType::kFp8E4M3));
  EXPECT_FALSE(aligned_leading_dimension(8, DataType::kFp8E4M3));
}

// An expert's fc1 (hidden 2048 -> 2816 here) over 273 rows: forward Y = X W (m = rows), dgrad dX = dY W^T
// (m = rows), wgrad dW = X^T dY (k = rows). No matrix leads with the rows.
TEST(GemmStorage, TheRowCountNeverLeads) {
  const std::int64_t rows = 273;
  const GemmStorage forward = gemm_storage(make_gemm(rows, 2816, 2048, 60, DataType::kBFloat16));
  EXPECT_EQ(forward, (GemmStorage{true, true, false}));  // C stored rows-major: its leading dimension 2816
  const GemmStorage dgrad = gemm_storage(make_gemm(rows, 2048, 2816, 60, DataType::kBFloat16));
  EXPECT_EQ(dgrad, (GemmStorage{true, true, false}));
  const GemmStorage wgrad = gemm_storage(make_gemm(2048, 2816, rows, 60, DataType::kBFloat16));
  EXPECT_EQ(wgrad, (GemmStorage{false, false, true}));  // A leads with 2048, B with 2816: the NT call
  // Where neither of a matrix's dimensions is aligned, it keeps the usual one: nothing better exists.
  EXPECT_EQ(gemm_storage(make_gemm(273, 275, 277, 1, DataType::kBFloat16)), kTn);
  EXPECT_EQ(gemm_storage(make_gemm(273, 275, 2048, 1, DataType::kBFloat16)), kTn);
}

// FP8 GEMMs run TN only on Hopper and Ada: the layout is never changed (their dimensions are padded to 16).
TEST(GemmStorage, Fp8KeepsTheTnCall) {
  const Gemm fp8 = fp8_gemm(make_gemm(273, 2816, 2048, 60, DataType::kBFloat16), DataType::kFp8E4M3, DataType::kFp8E4M3,
                            DataType::kBFloat16);
  EXPECT_EQ(gemm_storage(fp8), kTn);
}

}  // namespace
}  // namespace commscale

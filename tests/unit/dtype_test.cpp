#include "core/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace commscale {
namespace {

TEST(DataType, NamesSizesAndAliases) {
  EXPECT_EQ(size_of(DataType::kInt8), 1u);
  EXPECT_EQ(size_of(DataType::kBFloat16), 2u);
  EXPECT_EQ(size_of(DataType::kFloat64), 8u);
  for (DataType t : all_data_types()) EXPECT_EQ(parse_data_type(name(t), "-d"), t);
  EXPECT_EQ(parse_data_type("half", "-d"), DataType::kFloat16);
  EXPECT_EQ(parse_data_type("bfloat16", "-d"), DataType::kBFloat16);
  EXPECT_EQ(parse_data_type("float", "-d"), DataType::kFloat32);
  EXPECT_EQ(parse_data_type("double", "-d"), DataType::kFloat64);
  EXPECT_FALSE(is_floating(DataType::kInt32));
  EXPECT_TRUE(is_floating(DataType::kBFloat16));
}

TEST(DataType, UnknownNamesTheFlag) {
  try {
    (void)parse_data_type("fp8", "-d/--datatype");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "-d/--datatype: unknown data type \"fp8\" (expected int8, int32, fp16, bf16, fp32, fp64 or all)");
  }
  EXPECT_THROW((void)parse_reduce_op("mulsum", "-o"), InputError);
  for (ReduceOp op : all_reduce_ops()) EXPECT_EQ(parse_reduce_op(name(op), "-o"), op);
}

TEST(Half, Fp16ExactValuesByHand) {
  // 1.0 = 0 01111 0000000000 = 0x3C00; -2.0 = 0xC000; 65504 (largest) = 0x7BFF; 2^-24 (smallest subnormal) = 0x0001.
  EXPECT_EQ(float_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(float_to_fp16(0.0f), 0x0000);
  // 65520 is halfway between 65504 and 65536 (= infinity): ties to even rounds up to infinity.
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7C00);
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7BFF);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even keeps 1.0.
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // 1.5 ulp: rounds to even (2 ulp)
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(fp16_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_float(0x3555), 0.333251953125f);  // 1/3 rounded: 0x155 / 1024 * 2^-2 + 2^-2
}

TEST(Half, Bf16ExactValuesByHand) {
  // bf16 keeps the top 16 bits of a float: 1.0f = 0x3F800000 -> 0x3F80.
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);  // pi truncated to 8 bits of mantissa
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even keeps 1.0; 1 + 3*2^-8 rounds up to 1 + 2^-6.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Half, SmallIntegersRoundTripExactly) {
  // The verification pattern relies on integers being exact: to 2048 in fp16, to 256 in bf16.
  for (int i = -2048; i <= 2048; ++i) EXPECT_EQ(fp16_to_float(float_to_fp16(static_cast<float>(i))), i);
  for (int i = -256; i <= 256; ++i) EXPECT_EQ(bf16_to_float(float_to_bf16(static_cast<float>(i))), i);
}

}  // namespace
}  // namespace commscale

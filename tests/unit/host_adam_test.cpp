// runtime/host_adam.hpp: the host optimizer both step engines run for --offload-optimizer cpu. AdamW's
// update against steps worked by hand, the bf16 conversions against their bit patterns, and the engines'
// path (16-bit gradients in, 16-bit weights out, on several threads) against the same arithmetic.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "runtime/host_adam.hpp"

namespace commscale {
namespace {

// lr 0.1, betas 0.9 and 0.999, eps 1e-8; a parameter p0 = 1 without weight decay and p1 = 2 with 0.01.
// Step 1, g = 0.5: m = 0.1 x 0.5 = 0.05, v = 0.001 x 0.25 = 0.00025; the step size is lr / (1 - 0.9) = 1 and
// the denominator sqrt(0.00025) / sqrt(1 - 0.999) + eps = 0.5 + 1e-8, so each parameter moves by
// 0.05 / 0.5 = 0.1 (less 2e-9): p0 = 0.9; p1 also decays by lr x wd x p = 0.002: 1.898.
// Step 2, g = -0.25: m = 0.9 x 0.05 - 0.1 x 0.25 = 0.02, v = 0.999 x 0.00025 + 0.001 x 0.0625 = 0.00031225; the
// step size is 0.1 / (1 - 0.81) = 0.5263158 and the denominator sqrt(0.00031225 / (1 - 0.998001)) = 0.3952254,
// so each moves by 0.5263158 x 0.02 / 0.3952254 = 0.0266337: p0 = 0.8733663; p1 = 1.898 - 0.001898 - 0.0266337
// = 1.8694683. (In fp32, 1 - 0.999 is 0.000999987: v is within 2e-5 of its value, not 1e-7.)
TEST(HostAdam, AdamWStepsMatchTheHandComputedOnes) {
  const AdamSettings without{.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f};
  AdamSettings with = without;
  with.weight_decay = 0.01f;
  float p[2] = {1.0f, 2.0f};
  float m[2] = {0.0f, 0.0f};
  float v[2] = {0.0f, 0.0f};
  float g[2] = {0.5f, 0.5f};
  adam_update(without, 1, &p[0], &m[0], &v[0], &g[0], 1);
  adam_update(with, 1, &p[1], &m[1], &v[1], &g[1], 1);
  EXPECT_NEAR(m[0], 0.05f, 1e-7f);
  EXPECT_NEAR(v[0], 0.00025f, 5e-9f);
  EXPECT_NEAR(p[0], 0.9f, 1e-6f);
  EXPECT_NEAR(p[1], 1.898f, 1e-6f);
  g[0] = g[1] = -0.25f;
  adam_update(without, 2, &p[0], &m[0], &v[0], &g[0], 1);
  adam_update(with, 2, &p[1], &m[1], &v[1], &g[1], 1);
  EXPECT_NEAR(m[1], 0.02f, 1e-7f);
  EXPECT_NEAR(v[1], 0.00031225f, 7e-9f);
  EXPECT_NEAR(p[0], 0.8733663f, 1e-6f);
  EXPECT_NEAR(p[1], 1.8694683f, 1e-6f);
}

TEST(HostAdam, Bf16IsTheTopHalfRoundedToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xC040), -3.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to even (1); 1 + 3 x 2^-8 is halfway to even 1 + 2^-6.
  EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 256.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + 3.0f / 256.0f), 0x3F82);
  // Just above halfway rounds up.
  EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 256.0f + 1.0f / 65536.0f), 0x3F81);
  std::uint32_t nan_bits = 0x7F800001u;  // a NaN whose payload is only in the low half stays a NaN
  float nan = 0.0f;
  std::memcpy(&nan, &nan_bits, sizeof(nan));
  EXPECT_EQ(float_to_bf16(nan) & 0x7FC0, 0x7FC0);
}

// The engines' path: bf16 gradients in, AdamW on the fp32 state, bf16 weights out in the same buffer. The
// state starts at master 0.02 and zero moments; with a gradient of 1 at step 1 every parameter moves by lr
// (m / sqrt(v) = 1 after bias correction) and decays by lr x wd x 0.02.
TEST(HostAdam, UpdatesARangeFrom16BitGradientsOnSeveralThreads) {
  const std::uint64_t n = 300'000;  // several threads' shares of 64 Ki parameters
  const AdamSettings s{.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f};
  HostAdam one(n + 10, 1, s);
  HostAdam four(n + 10, 4, s);
  std::vector<std::uint16_t> a(n, float_to_bf16(1.0f));
  std::vector<std::uint16_t> b = a;
  one.update(10, n, 1, reinterpret_cast<const std::byte*>(a.data()), reinterpret_cast<std::byte*>(a.data()), 2);
  four.update(10, n, 1, reinterpret_cast<const std::byte*>(b.data()), reinterpret_cast<std::byte*>(b.data()), 2);
  const float expected = 0.02f - 1e-3f * 0.1f * 0.02f - 1e-3f;  // 0.018998
  // Before the range: untouched.
  EXPECT_EQ(one.master()[9], 0.02f);
  for (std::uint64_t i = 10; i < n + 10; i += 997) {
    ASSERT_NEAR(one.master()[i], expected, 1e-7f) << i;
    ASSERT_EQ(four.master()[i], one.master()[i]) << i;
    ASSERT_NEAR(four.first_moment()[i], 0.1f, 1e-7f) << i;
    ASSERT_NEAR(four.second_moment()[i], 0.05f, 1e-7f) << i;
  }
  EXPECT_EQ(four.master()[n + 9], one.master()[n + 9]);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.front(), float_to_bf16(expected));
  EXPECT_EQ(a.back(), float_to_bf16(expected));
}

TEST(HostAdam, Fp32WeightsAreCopiedWhole) {
  HostAdam adam(2, 1, AdamSettings{.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f});
  float data[2] = {0.5f, 0.5f};  // gradients in, weights out
  adam.update(0, 2, 1, reinterpret_cast<const std::byte*>(data), reinterpret_cast<std::byte*>(data), 4);
  // From 0.02, one step of 0.1 (as the hand-computed step above): -0.08.
  EXPECT_NEAR(data[0], -0.08f, 1e-6f);
  EXPECT_EQ(data[1], adam.master()[1]);
}

TEST(HostAdam, ARangePastTheStateIsCutToIt) {
  HostAdam adam(4, 2);
  std::vector<std::uint16_t> g(8, float_to_bf16(1.0f));
  adam.update(2, 8, 1, reinterpret_cast<const std::byte*>(g.data()), reinterpret_cast<std::byte*>(g.data()), 2);
  EXPECT_NE(adam.master()[3], 0.02f);
  EXPECT_EQ(g[2], float_to_bf16(1.0f));  // only the two parameters the state holds were written
}

}  // namespace
}  // namespace commscale

// The catalog's default interference rows (topologies/interference.json, one H200's probe) as they apply to
// another GPU: expected values are derived by hand from the rows and the GPUs' catalog figures.

#include <gtest/gtest.h>

#include "hw_test_support.hpp"
#include "predict/interference.hpp"

namespace commscale::predict {
namespace {

// An A100 (108 SMs, 2039 GB/s) priced from the H200's rows (132 SMs, 4800 GB/s), without a profile.
InterferenceModel a100_defaults() {
  const hw::GpuSpec a100 = hw::testing::catalog().gpu("a100-sxm4-80gb", "test");
  return interference_for(a100, nullptr);
}

TEST(InterferenceDefaults, WithoutAProfileTheCatalogsRowsApplyAndSayWhereTheyCameFrom) {
  const InterferenceModel model = a100_defaults();
  ASSERT_FALSE(model.empty());
  EXPECT_NE(model.source().find("interference.json"), std::string::npos) << model.source();
  EXPECT_NE(model.source().find("H200"), std::string::npos) << model.source();
}

TEST(InterferenceDefaults, ALoadIsTheA100sShareOfSmsAndHbm) {
  const InterferenceModel::Load load = a100_defaults().load(16, GBps(203.9));
  EXPECT_NEAR(load.sm_share, 16.0 / 108.0, 1e-12);
  EXPECT_NEAR(load.hbm_share, 2 * 203.9 / 2039.0, 1e-12);  // 0.2
}

// 16 channels are 16/108 of an A100's SMs: between the probe's 16 and 32 SM rows (16/132 and 32/132 of an
// H200's), at t = (16/108 - 16/132) / (16/132) = 132/108 - 1 = 2/9 of the way.
constexpr double kT = 132.0 / 108.0 - 1.0;

TEST(InterferenceDefaults, HoldingSmsWithoutTrafficSlowsAGemmAsTheSpinRows) {
  const InterferenceModel model = a100_defaults();
  const InterferenceModel::Load load{16.0 / 108.0, 0.0};
  // gemm spin rows: 16 SMs 1.3303, 32 SMs 1.5022.
  EXPECT_NEAR(model.compute_slowdown(Beside::kGemm, load), 1.3303 + (1.5022 - 1.3303) * kT, 1e-9);  // 1.3685
  EXPECT_NEAR(model.comm_slowdown(Beside::kGemm, load), 1.0, 1e-12);
}

TEST(InterferenceDefaults, StreamingAsFastAsTheProbeGivesTheStreamRows) {
  const InterferenceModel model = a100_defaults();
  // The probe streamed 1417.4 (16 SMs) and 2656.0 GB/s (32 SMs) of the H200's 4800: at t its share is
  const double probe_share = (1417.4 + (2656.0 - 1417.4) * kT) / 4800.0;  // 0.3526
  const InterferenceModel::Load load{16.0 / 108.0, probe_share};
  // memory stream rows: compute 1.3394 and 1.4902, probe (the collective) 1.8618 and 1.921.
  EXPECT_NEAR(model.compute_slowdown(Beside::kMemory, load), 1.3394 + (1.4902 - 1.3394) * kT, 1e-9);  // 1.3729
  EXPECT_NEAR(model.comm_slowdown(Beside::kMemory, load), 1.8618 + (1.921 - 1.8618) * kT, 1e-9);      // 1.8750
  // Half that traffic: halfway from the spin rows (compute 1.0822, 1.0838; the collective 1.0) to them.
  const InterferenceModel::Load half{16.0 / 108.0, probe_share / 2};
  const double spin = 1.0822 + (1.0838 - 1.0822) * kT;
  const double stream = 1.3394 + (1.4902 - 1.3394) * kT;
  EXPECT_NEAR(model.compute_slowdown(Beside::kMemory, half), spin + (stream - spin) / 2, 1e-9);  // 1.2277
  EXPECT_NEAR(model.comm_slowdown(Beside::kMemory, half), 1.0 + (1.8618 + (1.921 - 1.8618) * kT - 1.0) / 2, 1e-9);
}

}  // namespace
}  // namespace commscale::predict

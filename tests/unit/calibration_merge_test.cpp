// `calibrate --merge`: rows of the same shape or group are replaced, others added; another GPU's
// profile is refused.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "report/calibration_merge.hpp"

namespace commscale {
namespace {

using Json = nlohmann::ordered_json;

Json profile(const std::string& gpu, const std::string& path_class, double time_us) {
  return Json{{"machine", {{"gpu", gpu}, {"source", path_class}}},
              {"gemm", Json::array({{{"m", 8}, {"n", 8}, {"k", 8}, {"batch", 1}, {"dtype", "bf16"}, {"seconds", 1e-6}}})},
              {"collectives", Json::array({{{"collective", "all_reduce"}, {"ranks", 2}, {"nodes", 1},
                                            {"path_class", path_class},
                                            {"points", Json::array({{{"size_bytes", 1024}, {"time_us", time_us}}})}}})}};
}

TEST(CalibrationMerge, ReplacesTheSameRowsAndAddsOthers) {
  Json base = profile("h200-sxm", "nvlink", 6.0);
  merge_calibration(base, profile("h200-sxm", "host_staged", 10.0), "cal.json");
  ASSERT_EQ(base["collectives"].size(), 2u);  // another path class: added
  EXPECT_EQ(base["gemm"].size(), 1u);         // the same shape: replaced
  merge_calibration(base, profile("h200-sxm", "nvlink", 7.0), "cal.json");
  ASSERT_EQ(base["collectives"].size(), 2u);
  EXPECT_EQ(base["collectives"][0]["points"][0]["time_us"], 7.0);
  EXPECT_EQ(base["machine"]["source"], "nvlink; host_staged; nvlink");
}

TEST(CalibrationMerge, MemoryRowsOfAnotherKindAreAdded) {
  Json base = profile("h200-sxm", "nvlink", 6.0);
  base["memory"] = Json::array({{{"bytes", 1024}, {"seconds", 1e-6}}});
  Json more = profile("h200-sxm", "nvlink", 6.0);
  more["memory"] = Json::array({{{"bytes", 1024}, {"seconds", 2e-6}, {"kind", "softmax"}, {"kernels", "eager"}},
                                {{"bytes", 1024}, {"seconds", 3e-6}, {"kind", "softmax"}, {"kernels", "eager"},
                                 {"phase", "bwd"}}});
  merge_calibration(base, more, "cal.json");
  ASSERT_EQ(base["memory"].size(), 3u);  // the generic row stays; forward and backward are added
  more["memory"] = Json::array({{{"bytes", 1024}, {"seconds", 4e-6}, {"kind", "softmax"}, {"kernels", "eager"},
                                 {"phase", "fwd"}}});
  merge_calibration(base, more, "cal.json");
  ASSERT_EQ(base["memory"].size(), 3u);  // phase fwd is the default: replaced
  EXPECT_EQ(base["memory"][1]["seconds"], 4e-6);
  EXPECT_EQ(base["memory"][0]["seconds"], 1e-6);
}

// calibrate --measure host,interference, and the PyTorch scripts, add these sections to a profile.
TEST(CalibrationMerge, HostInterferenceAttentionDeviceAndClockAreMerged) {
  Json base = profile("h200-sxm", "nvlink", 6.0);
  base["clock"] = {{"gemm", "old"}, {"source", "old"}, {"points", Json::array({{{"gemm_share", 1.0}, {"speedup", 1.0}}})}};
  base["host"] = Json::array({{{"framework", "commscale"}, {"step_us", 10}}, {{"framework", "megatron"}}});
  base["device"] = {{"kernel_floor_us", 2.0}, {"source", "old"}};
  Json more = profile("h200-sxm", "nvlink", 6.0);
  more["host"] = Json::array({{{"framework", "commscale"}, {"step_us", 12}}, {{"framework", "pytorch-eager"}}});
  more["device"] = {{"kernel_floor_us", 2.5}, {"source", "new"}};
  more["clock"] = {{"gemm", "new"}, {"source", "new"}, {"points", Json::array({{{"gemm_share", 0.5}, {"speedup", 1.1}}})}};
  more["interference"] = Json::array({{{"sms", 4}, {"probe_GBps", 0.0}, {"beside", "gemm"}},
                                      {{"sms", 4}, {"probe_GBps", 0.0}, {"beside", "memory"}}});
  more["attention"] = Json::array({{{"seq", 512}, {"batch", 8}, {"head_dim", 64}, {"dtype", "bf16"}, {"phase", "fwd"}}});
  merge_calibration(base, more, "cal.json");
  ASSERT_EQ(base["host"].size(), 3u);  // commscale replaced, megatron kept, pytorch-eager added
  EXPECT_EQ(base["host"][0]["step_us"], 12);
  EXPECT_EQ(base["host"][2]["framework"], "pytorch-eager");
  EXPECT_EQ(base["device"]["kernel_floor_us"], 2.5);
  EXPECT_EQ(base["clock"]["source"], "new");  // one curve per profile: the newer one
  EXPECT_EQ(base["interference"].size(), 2u);  // the same SMs beside two kinds of work: two rows
  merge_calibration(base, more, "cal.json");
  EXPECT_EQ(base["interference"].size(), 2u);
  EXPECT_EQ(base["attention"].size(), 1u);
}

TEST(CalibrationMerge, RefusesAnotherGpusProfile) {
  Json base = profile("h200-sxm", "nvlink", 6.0);
  try {
    merge_calibration(base, profile("a100-sxm-80gb", "nvlink", 6.0), "cal.json");
    FAIL() << "merged profiles of two GPUs";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cal.json: it is a profile of \"h200-sxm\""), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace commscale

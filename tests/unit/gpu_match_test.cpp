#include "hw/gpu_match.hpp"

#include <gtest/gtest.h>

namespace commscale::hw {
namespace {

const std::vector<std::string> kCatalog = {"a100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-pcie",
                                           "h100-sxm5",      "h200-sxm",       "l40s",           "rtx3090",
                                           "rtx4090",        "rtx5090",        "v100-sxm2-32gb"};

TEST(GpuMatch, NamesCudaReports) {
  EXPECT_EQ(match_gpu_name("NVIDIA H200", kCatalog), "h200-sxm");
  EXPECT_EQ(match_gpu_name("NVIDIA A100-SXM4-80GB", kCatalog), "a100-sxm4-80gb");
  EXPECT_EQ(match_gpu_name("NVIDIA A100-SXM4-40GB", kCatalog), "a100-sxm4-40gb");
  EXPECT_EQ(match_gpu_name("NVIDIA A100 80GB PCIe", kCatalog), "a100-pcie-80gb");
  EXPECT_EQ(match_gpu_name("NVIDIA H100 80GB HBM3", kCatalog), "h100-sxm5");
  EXPECT_EQ(match_gpu_name("NVIDIA H100 PCIe", kCatalog), "h100-pcie");
  EXPECT_EQ(match_gpu_name("NVIDIA GeForce RTX 4090", kCatalog), "rtx4090");
  EXPECT_EQ(match_gpu_name("NVIDIA GeForce RTX 3090", kCatalog), "rtx3090");
  EXPECT_EQ(match_gpu_name("Tesla V100-SXM2-32GB", kCatalog), "v100-sxm2-32gb");
  EXPECT_EQ(match_gpu_name("NVIDIA L40S", kCatalog), "l40s");
  EXPECT_FALSE(match_gpu_name("NVIDIA B200", kCatalog).has_value());
  EXPECT_FALSE(match_gpu_name("", kCatalog).has_value());
}

}  // namespace
}  // namespace commscale::hw

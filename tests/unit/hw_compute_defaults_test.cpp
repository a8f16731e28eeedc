// topologies/compute.json: every catalog GPU gets the family its compute capability and market say,
// Hopper's entry reproduces the compute model's fitted constants, bad files are refused naming the key,
// and an A100 GEMM is priced from Ampere's ceiling by hand.
#include <gtest/gtest.h>

#include <map>

#include "core/error.hpp"
#include "hw/compute_defaults.hpp"
#include "predict/compute_model.hpp"
#include "predict_test_support.hpp"

namespace commscale::hw {
namespace {

const ComputeCatalog& file_catalog() {
  static const ComputeCatalog c = read_compute_catalog(testing::kSourceDir + "/topologies/compute.json");
  return c;
}

TEST(ComputeDefaults, EveryCatalogGpuGetsItsFamily) {
  const std::map<std::string, std::string> expected = {{"a100-pcie-80gb", "ampere-datacenter"},
                                                       {"a100-sxm4-40gb", "ampere-datacenter"},
                                                       {"a100-sxm4-80gb", "ampere-datacenter"},
                                                       {"h100-pcie", "hopper"},
                                                       {"h100-sxm5", "hopper"},
                                                       {"h200-sxm", "hopper"},
                                                       {"l40s", "ada"},
                                                       {"rtx3090", "ampere-geforce"},
                                                       {"rtx4090", "ada"},
                                                       {"rtx5090", "blackwell-geforce"},
                                                       {"v100-sxm2-32gb", "volta"}};
  ASSERT_EQ(testing::catalog().gpu_names().size(), expected.size());
  for (const std::string& name : testing::catalog().gpu_names()) {
    const ComputeMatch m = match_compute_defaults(file_catalog(), testing::catalog().gpu(name, "test"));
    ASSERT_NE(m.defaults, nullptr) << name;
    EXPECT_FALSE(m.fallback) << name;
    EXPECT_EQ(m.defaults->family, expected.at(name)) << name;
  }
}

TEST(ComputeDefaults, HopperReproducesTheFittedConstants) {
  const ComputeDefaults& h = *match_compute_defaults(file_catalog(), testing::catalog().gpu("h200-sxm", "t")).defaults;
  EXPECT_EQ(*h.gemm_efficiency_ceiling.value, predict::kGemmEfficiency);
  EXPECT_EQ(*h.gemm_call_us.value, predict::kGemmCallUs);
  EXPECT_EQ(*h.pytorch_gemm_efficiency_ceiling.value, predict::kPytorchGemmEfficiency);
  EXPECT_EQ(*h.pytorch_gemm_call_us.value, predict::kPytorchGemmCallUs);
  EXPECT_EQ(*h.memory_kernel_efficiency.value, predict::kMemoryKernelEfficiency);
  EXPECT_EQ(*h.memory_kernel_us.value, predict::kMemoryKernelUs);
  EXPECT_EQ(*h.copy_efficiency.value, predict::kMemoryEfficiency);
  EXPECT_EQ(h.gemm_efficiency_ceiling.provenance.tag, SourceTag::kMeasured);
}

TEST(ComputeDefaults, UnknownFamilyFallsBackToTheDefault) {
  GpuSpec gpu = testing::catalog().gpu("a100-sxm4-80gb", "test");
  gpu.compute_capability.value = "11.0";
  const ComputeMatch m = match_compute_defaults(file_catalog(), gpu);
  ASSERT_NE(m.defaults, nullptr);
  EXPECT_TRUE(m.fallback);
  EXPECT_EQ(m.defaults->family, file_catalog().default_family);
}

std::string error_of(nlohmann::json doc) {
  try {
    (void)parse_compute_catalog(doc, "compute.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ComputeDefaults, BadFilesAreRefusedNamingTheKey) {
  const nlohmann::json good = read_json_file(testing::kSourceDir + "/topologies/compute.json");
  EXPECT_EQ(error_of(good), "");
  nlohmann::json doc = good;
  doc["families"][1]["gemm_efficiency_ceilng"] = doc["families"][1]["gemm_efficiency_ceiling"];
  EXPECT_NE(error_of(doc).find("families[1].gemm_efficiency_ceilng"), std::string::npos) << error_of(doc);
  doc = good;
  doc["families"][2].erase("copy_efficiency");
  EXPECT_NE(error_of(doc).find("families[2].copy_efficiency"), std::string::npos) << error_of(doc);
  doc = good;
  doc["families"][0]["memory_kernel_efficiency"]["value"] = 1.5;
  EXPECT_NE(error_of(doc).find("families[0].memory_kernel_efficiency.value"), std::string::npos) << error_of(doc);
  doc = good;
  doc["families"][0]["gemm_call_us"]["tag"] = "Q";
  EXPECT_NE(error_of(doc).find("families[0].gemm_call_us.tag"), std::string::npos) << error_of(doc);
  doc = good;
  doc["default_family"] = "kepler";
  EXPECT_NE(error_of(doc).find("default_family"), std::string::npos) << error_of(doc);
  doc = good;
  doc["families"][3]["market"] = "gaming";
  EXPECT_NE(error_of(doc).find("families[3].market"), std::string::npos) << error_of(doc);
}

TEST(ComputeDefaults, A100GemmByHandFromAmperesCeiling) {
  // commscale's executor (kPerProduct) takes the family's gemm_* figures.
  const predict::ComputeModel model(testing::catalog().gpu("a100-sxm4-80gb", "test"), nullptr,
                                    AttentionIssue::kPerProduct);
  const Gemm g = make_gemm(4096, 4096, 4096, 1, DataType::kBFloat16);
  // 32 x 32 = 1024 tiles on 108 SMs: 10 waves, 1024 / 1080 busy; depth 4096 / 4224; ceiling 0.902
  // (Ampere data-centre, S). 2 x 4096^3 FLOPs at 312 TFLOP/s x 0.82932 = 531.2 us, plus the 6 us call;
  // the operands (3 x 4096^2 x 2 bytes) would take 55.4 us at 2039 GB/s x 0.89: compute-bound.
  const double efficiency = 0.902 * (1024.0 / 1080.0) * (4096.0 / 4224.0);
  EXPECT_NEAR(model.efficiency(g), efficiency, 1e-12);
  EXPECT_NEAR(model.time(g).value(), 2.0 * 4096.0 * 4096.0 * 4096.0 / (312e12 * efficiency) + 6e-6, 1e-12);
  EXPECT_NEAR(model.time(g).value(), 537.2e-6, 0.1e-6);
  ASSERT_FALSE(model.notes().empty());
  EXPECT_NE(model.notes().front().find("Ampere data-centre"), std::string::npos) << model.notes().front();
  // Through PyTorch (every other framework): 0.766 (D) and 8 us: 633.5 us.
  const predict::ComputeModel pytorch(testing::catalog().gpu("a100-sxm4-80gb", "test"), nullptr);
  const double through_pytorch = 0.766 * (1024.0 / 1080.0) * (4096.0 / 4224.0);
  EXPECT_NEAR(pytorch.time(g).value(), 2.0 * 4096.0 * 4096.0 * 4096.0 / (312e12 * through_pytorch) + 8e-6, 1e-12);
  EXPECT_NE(pytorch.notes().front().find("PyTorch's GEMM ceiling 0.766 D"), std::string::npos) << pytorch.notes().front();
}

}  // namespace
}  // namespace commscale::hw

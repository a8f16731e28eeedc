// Every catalog file loads and validates; spot checks of figures against the vendors' documents; the file
// form round-trips; the topologies directory is found.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <variant>

#include "core/error.hpp"
#include "hw/topology_dir.hpp"
#include "hw_test_support.hpp"

namespace commscale::hw {
namespace {

using testing::catalog;
using testing::kSourceDir;

// Compares two JSON documents, numbers to a relative 1e-12 (µs <-> s conversions are not exact).
void expect_json_near(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b, const std::string& path) {
  if (a.is_number() && b.is_number()) {
    EXPECT_NEAR(a.get<double>(), b.get<double>(), 1e-12 * std::abs(a.get<double>())) << path;
    return;
  }
  ASSERT_EQ(a.type(), b.type()) << path;
  if (a.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << path;
    for (const auto& item : a.items()) {
      ASSERT_TRUE(b.contains(item.key())) << path << "." << item.key();
      expect_json_near(item.value(), b.at(item.key()), path + "." + item.key());
    }
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << path;
    for (std::size_t i = 0; i < a.size(); ++i) expect_json_near(a[i], b[i], path + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(a, b) << path;
  }
}

TEST(HwCatalog, HasTheGpusOfIssue4) {
  const std::vector<std::string> expected = {"a100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-pcie",
                                             "h100-sxm5",      "h200-sxm",       "l40s",           "rtx3090",
                                             "rtx4090",        "rtx5090",        "v100-sxm2-32gb"};
  EXPECT_EQ(catalog().gpu_names(), expected);
}

TEST(HwCatalog, HasTheClustersOfIssue4) {
  const std::vector<std::string> names = catalog().cluster_names();
  for (const char* name :
       {"hgx-a100", "a100-pcie-8x-bridged", "dgx1-v100", "hgx-h100", "hgx-h200", "rtx4090-8x-pcie",
        "rtx3090-4x-nvlink-pairs", "rtx3090-6x-pcie", "rtx5090-8x-pcie", "rtx4090-8x-roce100", "rtx3090-4x-25gbe",
        "h200x2", "h200x2-nop2p", "h200x2-sockets", "h200x1", "rtx4090-8x-pcie-p2p", "rtx5090-8x-pcie-p2p"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(HwCatalog, EveryGpuLoadsWithConsistentRates) {
  for (const std::string& name : catalog().gpu_names()) {
    SCOPED_TRACE(name);
    const GpuSpec gpu = catalog().gpu(name, "test");
    EXPECT_EQ(gpu.name, name);
    const auto& fp16acc = gpu.rate(MathRate::kFp16Fp16Acc).value;
    const auto& fp32acc = gpu.rate(MathRate::kFp16Fp32Acc).value;
    ASSERT_TRUE(fp32acc.has_value());
    // GeForce halves FP32 accumulate; nothing else does (the vendors' whitepapers).
    if (fp16acc) {
      EXPECT_EQ(gpu.halves_fp32_accumulate(), gpu.market == Market::kGeforce);
    }
    if (gpu.halves_fp32_accumulate()) {
      EXPECT_NEAR(fp32acc->value() * 2, fp16acc->value(), 1e12);  // 165.2 x 2 = 330.4 vs 330.3 on the 4090
    }
    // FP8 with both accumulators where the part has FP8 (compute capability 8.9 on), the FP16 one twice
    // the FP32 one on GeForce (RTX 4090: 660.6 and 330.3) and the same elsewhere; neither before.
    const auto& fp8 = gpu.rate(MathRate::kFp8Tensor).value;
    const auto& fp8_fp16acc = gpu.rate(MathRate::kFp8Fp16Acc).value;
    EXPECT_EQ(fp8.has_value(), fp8_fp16acc.has_value());
    if (fp8 && fp8_fp16acc) {
      EXPECT_NEAR(fp8_fp16acc->value(), fp8->value() * (gpu.halves_fp32_accumulate() ? 2 : 1), 1e12);
    }
    EXPECT_GT(gpu.memory_bw.value->value(), 0.0);
    EXPECT_TRUE(gpu.pcie_bw(catalog().reference()).known());
  }
}

TEST(HwCatalog, EveryClusterLoadsAndEveryPairHasAPath) {
  for (const std::string& name : catalog().cluster_names()) {
    SCOPED_TRACE(name);
    const ClusterSpec cluster = catalog().cluster(name, "test");
    const int nodes = cluster.network ? 3 : 1;
    const LinkGraph g = LinkGraph::build(cluster, nodes);
    EXPECT_EQ(g.ranks(), nodes * cluster.gpus_per_node());
    for (int a = 0; a < g.ranks(); ++a) {
      for (int b = 0; b < g.ranks(); ++b) {
        if (a == b) continue;
        const Path p = g.path(a, b);
        EXPECT_FALSE(p.hops.empty());
        EXPECT_GT(p.bw.value(), 0.0);
        EXPECT_EQ(p.path_class == PathClass::kNetwork, g.node_of(a) != g.node_of(b));
      }
    }
  }
}

// Figures often quoted wrong, each against the vendor's document.
TEST(HwCatalog, FiguresMatchHardwareMd) {
  const GpuSpec a100 = catalog().gpu("a100-sxm4-80gb", "test");
  EXPECT_DOUBLE_EQ(a100.rate(MathRate::kTf32Tensor).value->value(), 156e12);   // TF32, not FP16
  EXPECT_DOUBLE_EQ(a100.rate(MathRate::kBf16Fp32Acc).value->value(), 312e12);  // FP16/BF16 dense
  const GpuSpec rtx5090 = catalog().gpu("rtx5090", "test");
  EXPECT_EQ(*rtx5090.compute_capability.value, "12.0");  // Blackwell, not Ada
  EXPECT_EQ(rtx5090.memory.value->count(), 32 * kGiB);
  EXPECT_DOUBLE_EQ(rtx5090.memory_bw.value->value(), 1792.0);  // not the 3090's 936
  const GpuSpec rtx4090 = catalog().gpu("rtx4090", "test");
  EXPECT_DOUBLE_EQ(rtx4090.rate(MathRate::kFp16Fp32Acc).value->value(), 165.2e12);
  EXPECT_FALSE(*rtx4090.p2p_over_pcie.value);
  const GpuSpec h200 = catalog().gpu("h200-sxm", "test");
  EXPECT_EQ(h200.memory.value->count(), 141 * kGiB);
  // 18 links x 25 GB/s per direction = 450 GB/s per direction = 900 GB/s total [H200].
  EXPECT_DOUBLE_EQ(h200.nvlink.bw_per_direction().value(), 450.0);
  const GpuSpec v100 = catalog().gpu("v100-sxm2-32gb", "test");
  EXPECT_FALSE(v100.rate(MathRate::kBf16Fp32Acc).known());  // FP16 only
  EXPECT_FALSE(v100.rate(MathRate::kFp8Tensor).known());
  // The 3090's P2P status is unclear (U): its clusters treat it as no.
  const GpuSpec rtx3090 = catalog().gpu("rtx3090", "test");
  EXPECT_FALSE(rtx3090.p2p_over_pcie.known());
  EXPECT_EQ(rtx3090.p2p_over_pcie.provenance.tag, SourceTag::kUnverified);
  EXPECT_FALSE(catalog().cluster("rtx3090-6x-pcie", "test").pcie_p2p_allowed());
}

TEST(HwCatalog, MeasuredFiguresAreTaggedM) {
  const ClusterSpec h200x2 = catalog().cluster("h200x2", "test");
  EXPECT_EQ(h200x2.layout.tag, SourceTag::kMeasured);
  ASSERT_FALSE(h200x2.measurements.empty());
  EXPECT_EQ(h200x2.measurements[0].collective, Collective::kAllReduce);
  EXPECT_DOUBLE_EQ(h200x2.measurements[0].busbw_GBps, 346.0);
  const ClusterSpec sockets = catalog().cluster("h200x2-sockets", "test");
  const auto socket = std::find_if(sockets.node.links.begin(), sockets.node.links.end(),
                                   [](const LinkSpec& l) { return l.type == LinkType::kSocket; });
  ASSERT_NE(socket, sockets.node.links.end());
  EXPECT_EQ(socket->bw.provenance.tag, SourceTag::kMeasured);
}

TEST(HwCatalog, FilesRoundTrip) {
  for (const std::string& name : catalog().gpu_names()) {
    SCOPED_TRACE(name);
    const GpuSpec gpu = catalog().gpu(name, "test");
    const nlohmann::ordered_json once = gpu_to_json(gpu);
    GpuSpec again = parse_gpu(nlohmann::json::parse(once.dump()), "round trip", catalog().reference());
    again.file = gpu.file;
    EXPECT_EQ(again, gpu);
  }
  const GpuResolver resolve = [](const std::string& ref, const std::string& where) {
    return catalog().gpu(ref, where);
  };
  for (const std::string& name : catalog().cluster_names()) {
    SCOPED_TRACE(name);
    const nlohmann::ordered_json once = cluster_to_json(catalog().cluster(name, "test"));
    const ClusterSpec again =
        parse_cluster(nlohmann::json::parse(once.dump()), "round trip", catalog().reference(), resolve);
    expect_json_near(cluster_to_json(again), once, name);
  }
}

TEST(HwCatalog, LinksExpandFromPatterns) {
  // hgx-a100: "gpu*" x nvswitch0 "all" gives 8 NVLink links of 12 lanes; the PCIe entries give
  // 4 switches x (2 GPUs + 2 NICs) + 4 switch uplinks = 20 PCIe links; plus 1 link between sockets.
  const ClusterSpec c = catalog().cluster("hgx-a100", "test");
  const auto count = [&](LinkType t) {
    return std::count_if(c.node.links.begin(), c.node.links.end(), [t](const LinkSpec& l) { return l.type == t; });
  };
  EXPECT_EQ(count(LinkType::kNvlink), 8);
  EXPECT_EQ(count(LinkType::kPcie), 20);
  EXPECT_EQ(count(LinkType::kCpu), 1);
  EXPECT_EQ(c.node.links[0].lanes, 12);
  EXPECT_DOUBLE_EQ(c.node.links[0].bw.value->value(), 300.0);  // 12 x 25 GB/s
  EXPECT_EQ(c.node.links[0].bw.provenance.tag, SourceTag::kDerived);
}

TEST(HwCatalog, NamesAndPathsAreBothAccepted) {
  EXPECT_TRUE(looks_like_path("my/cluster.json"));
  EXPECT_TRUE(looks_like_path("cluster.json"));
  EXPECT_FALSE(looks_like_path("hgx-a100"));
  const ClusterSpec by_path = catalog().cluster(kSourceDir + "/topologies/clusters/h200x2.json", "test");
  EXPECT_EQ(by_path.name, "h200x2");
  EXPECT_TRUE(std::holds_alternative<GpuSpec>(catalog().any("rtx4090", "test")));
  EXPECT_TRUE(std::holds_alternative<ClusterSpec>(catalog().any("h200x2", "test")));
  EXPECT_THROW((void)catalog().any("no-such-thing", "test"), InputError);
}

TEST(HwCatalog, CatalogNameMustMatchFileName) {
  // A copy of the catalog's reference files with a GPU whose "name" differs from its file name.
  // Per process: other build directories may run this test at the same time.
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("commscale_hw_catalog_name_test_" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "gpus");
  std::filesystem::copy_file(kSourceDir + "/topologies/sources.json", root / "sources.json");
  std::filesystem::copy_file(kSourceDir + "/topologies/links.json", root / "links.json");
  std::filesystem::copy_file(testing::kFixtures + "valid_gpu.json", root / "gpus" / "other-name.json");
  const Catalog c = Catalog::open(root);
  try {
    (void)c.gpu("other-name", "test");
    FAIL() << "a misnamed catalog file was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("other-name.json: name: is \"test-gpu\""), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(root);
}

TEST(HwTopologyDir, CandidatesFollowTheExecutable) {
  // The build tree's executable is <build>/src/commscale: ../../topologies is the source tree's when
  // the build directory sits in it; installed, <prefix>/bin/commscale finds <prefix>/share/commscale.
  const auto candidates = topologies_dir_candidates("/repo/build/src/commscale");
  ASSERT_GE(candidates.size(), 2u);
  EXPECT_EQ(candidates[0], std::filesystem::path("/repo/topologies"));
  EXPECT_EQ(candidates[1], std::filesystem::path("/repo/build/share/commscale/topologies"));
  EXPECT_TRUE(is_topologies_dir(kSourceDir + "/topologies"));
  EXPECT_FALSE(is_topologies_dir(kSourceDir + "/src"));
}

TEST(HwTopologyDir, EnvironmentVariableWinsAndIsChecked) {
  ASSERT_EQ(setenv("COMMSCALE_TOPOLOGIES", (kSourceDir + "/topologies").c_str(), 1), 0);
  EXPECT_EQ(find_topologies_dir(), std::filesystem::path(kSourceDir + "/topologies"));
  ASSERT_EQ(setenv("COMMSCALE_TOPOLOGIES", "/nonexistent/topologies", 1), 0);
  EXPECT_THROW((void)find_topologies_dir(), InputError);
  ASSERT_EQ(unsetenv("COMMSCALE_TOPOLOGIES"), 0);
  // The unit-test binary is <build>/tests/commscale_unit_tests, so <exe>/../../topologies may not be
  // the source tree; the configure-time path is the fallback, which must be found.
  EXPECT_TRUE(is_topologies_dir(find_topologies_dir()));
}

}  // namespace
}  // namespace commscale::hw

// Malformed topology files (tests/data/hw/) are rejected with a message naming the file, the key path
// and the problem; well-formed fixtures load.

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "core/error.hpp"
#include "hw_test_support.hpp"

namespace commscale::hw {
namespace {

using testing::catalog;
using testing::kFixtures;

struct Malformed {
  const char* file;
  const char* message;  // expected after "<fixtures>/<file>: "
};

// Each fixture is a valid file (valid_gpu.json, valid_cluster.json) with one thing broken.
constexpr Malformed kMalformed[] = {
    {"not_json.json", "is not valid JSON"},
    {"gpu_duplicate_key.json", "has the key \"sm_count\" twice in one object"},
    {"gpu_schema_version.json", "schema_version: is 2 (expected 1)"},
    {"gpu_unknown_key.json", "fp4_TFLOPS: is not a known key"},
    {"gpu_unknown_figure_key.json", "tdp_W.unit: is not a known key"},
    {"gpu_missing_key.json", "memory_bw_GBps: is missing"},
    {"gpu_nested_typo.json", "nvlink.link_bw_GBps: is missing"},
    {"gpu_missing_source.json", "l2_MiB.source: is missing"},
    {"gpu_bad_tag.json", "sm_count.tag: \"X\" is not a tag (expected P, D, S, U or M)"},
    {"gpu_p_without_citation.json", "fp32_TFLOPS.source: \"datasheet\" cites no document"},
    {"gpu_unknown_citation.json", "fp32_TFLOPS.source: cites [XYZ], which topologies/sources.json lacks"},
    {"gpu_null_required.json", "memory_GiB.value: is null"},
    {"gpu_negative.json", "memory_bw_GBps.value: is -5 (expected more than 0)"},
    {"gpu_wrong_type.json", "sm_count.value: is \"132\" (expected a whole number)"},
    {"gpu_pcie_generation.json", "pcie.generation: PCIe gen6 is not in topologies/links.json"},
    {"gpu_market.json", "market: \"gaming\" is not a market"},
    {"cluster_missing_node_links.json", "node.links: is missing"},
    {"cluster_unknown_device.json", "node.links[0].b: \"gpu9\" does not exist: node.devices has 2 gpu"},
    {"cluster_bad_link_type.json", "node.links[0].type: \"infiniband\" is not a link type"},
    {"cluster_bad_ends.json", "node.links[3]: pcie cannot join gpu0 and gpu1"},
    {"cluster_bad_width.json", "node.links[2].width: is 12"},
    {"cluster_missing_connect.json", "node.links[1].connect: is missing for 2 x 1 devices"},
    {"cluster_zip_mismatch.json", "node.links[1].connect: \"zip\" pairs 2 devices with 1"},
    {"cluster_duplicate_link.json", "node.links[3]: joins cpu0 and gpu1 by pcie a second time"},
    {"cluster_cpu_link_missing_bw.json", "node.links[3].bw_GBps: is missing"},
    {"cluster_nvlink_too_many.json", "node.links: gpu0 has 20 NVLink lanes, but h200-sxm has 18 NVLink links"},
    {"cluster_no_pcie_root.json", "node.links: gpu1 has no PCIe path to a cpu"},
    {"cluster_unlinked_device.json", "node.links: pcie_switch0 has no link"},
    {"cluster_nic_without_network.json", "network: is missing, but the node has 1 nic"},
    {"cluster_network_topology.json", "network.topology: \"fat_tree\" is not supported"},
    {"cluster_unknown_transport_key.json", "transports.nvls: is not a known key"},
    {"cluster_unknown_gpu.json", "gpu: \"a100-sxm9\" is not in the GPU catalog"},
    {"cluster_bad_measurement.json", "measurements[0].collective: unknown collective \"allreduce2\""},
};

// Names the fixture in gtest's output instead of dumping the struct's bytes.
void PrintTo(const Malformed& m, std::ostream* os) { *os << m.file; }

class HwMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(HwMalformed, IsRejectedNamingFileAndKey) {
  const Malformed m = GetParam();
  const std::string file = kFixtures + m.file;
  const std::string expected = file + ": " + m.message;
  try {
    (void)catalog().any(file, "test");
    FAIL() << file << " was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_EQ(std::string(e.what()).rfind(expected, 0), 0u) << "got:      " << e.what() << "\nexpected: " << expected;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HwMalformed, ::testing::ValuesIn(kMalformed),
                         [](const ::testing::TestParamInfo<Malformed>& info) {
                           std::string name = info.param.file;
                           name = name.substr(0, name.find('.'));
                           for (char& c : name) c = (c == '-' ? '_' : c);
                           return name;
                         });

TEST(HwFixtures, ValidBasesLoad) {
  // The malformed fixtures differ from these in one place each, so these must load.
  EXPECT_EQ(catalog().gpu(kFixtures + "valid_gpu.json", "test").name, "test-gpu");
  const ClusterSpec c = catalog().cluster(kFixtures + "valid_cluster.json", "test");
  EXPECT_EQ(c.gpus_per_node(), 2);
  EXPECT_TRUE(c.network.has_value());
}

TEST(HwFixtures, AFileOfTheOtherKindIsRejected) {
  try {
    (void)catalog().gpu(kFixtures + "valid_cluster.json", "test");
    FAIL() << "a cluster file was read as a GPU";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("valid_cluster.json: kind: is \"cluster\" (expected \"gpu\")"),
              std::string::npos)
        << e.what();
  }
}

TEST(HwFixtures, MissingFileIsNamed) {
  EXPECT_THROW((void)catalog().cluster(kFixtures + "no_such_file.json", "test"), InputError);
  EXPECT_THROW((void)catalog().cluster("no-such-cluster", "--cluster"), InputError);
}

}  // namespace
}  // namespace commscale::hw

// The topology file `commscale topo --output` writes, from hand-made discoveries: it must load with
// the catalog's own loader, and the project's 2xH200 machine must come out as the hand-written
// topologies/clusters/h200x2.json describes it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "discovery_fixtures.hpp"
#include "hw/link_graph.hpp"
#include "hw_test_support.hpp"
#include "input_error_matcher.hpp"
#include "report/topo_cluster.hpp"

namespace commscale {
namespace {

using hw::testing::catalog;

std::optional<std::string> catalog_gpu(const std::string& cuda_name, double memory_GiB) {
  DiscoveredGpu g;
  g.name = cuda_name;
  g.memory = Bytes(static_cast<std::uint64_t>(memory_GiB * static_cast<double>(kGiB)));
  return catalog_gpu_for(g, catalog());
}

TEST(TopoCluster, CudaNamesMapToCatalogGpus) {
  // Memory as CUDA reports it: somewhat less than the catalog's vendor figure.
  EXPECT_EQ(catalog_gpu("NVIDIA H200", 139.8), "h200-sxm");
  EXPECT_EQ(catalog_gpu("NVIDIA H100 80GB HBM3", 79.1), "h100-sxm5");
  EXPECT_EQ(catalog_gpu("NVIDIA H100 PCIe", 79.2), "h100-pcie");
  EXPECT_EQ(catalog_gpu("NVIDIA A100-SXM4-80GB", 79.2), "a100-sxm4-80gb");
  EXPECT_EQ(catalog_gpu("NVIDIA A100-SXM4-40GB", 39.4), "a100-sxm4-40gb");
  EXPECT_EQ(catalog_gpu("NVIDIA A100 80GB PCIe", 79.2), "a100-pcie-80gb");
  EXPECT_EQ(catalog_gpu("Tesla V100-SXM2-32GB", 31.7), "v100-sxm2-32gb");
  EXPECT_EQ(catalog_gpu("NVIDIA GeForce RTX 3090", 23.7), "rtx3090");
  EXPECT_EQ(catalog_gpu("NVIDIA GeForce RTX 4090", 23.6), "rtx4090");
  EXPECT_EQ(catalog_gpu("NVIDIA GeForce RTX 5090", 31.4), "rtx5090");
  EXPECT_EQ(catalog_gpu("NVIDIA L40S", 44.5), "l40s");
  // Parts the catalog does not have: variants of a catalog name, another memory size, another chip.
  EXPECT_EQ(catalog_gpu("NVIDIA H200 NVL", 139.8), std::nullopt);
  EXPECT_EQ(catalog_gpu("NVIDIA H100 NVL", 93.1), std::nullopt);
  EXPECT_EQ(catalog_gpu("NVIDIA A100-PCIE-40GB", 39.4), std::nullopt);  // 49% of a100-pcie-80gb's memory
  EXPECT_EQ(catalog_gpu("NVIDIA GeForce RTX 3090 Ti", 23.7), std::nullopt);
  EXPECT_EQ(catalog_gpu("NVIDIA GeForce RTX 4090 D", 23.6), std::nullopt);
  EXPECT_EQ(catalog_gpu("NVIDIA B200", 179.0), std::nullopt);

  MachineDiscovery m = testing::rtx4090x2();
  match_catalog_gpus(m, catalog());
  EXPECT_EQ(m.gpus[1].catalog_gpu, "rtx4090");
}

// Builds the file for `m` and loads it back through the catalog, as `hw show FILE` would.
hw::ClusterSpec round_trip(const MachineDiscovery& m, const std::string& gpu, const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("commscale-topo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / (name + ".json");
  const TopologyRequest request{name, file.string(), gpu, catalog().gpu(gpu, "test"), "2026-12-01"};
  const hw::ClusterSpec built = cluster_from_discovery(m, request, catalog().reference());
  std::ofstream(file) << hw::cluster_to_json(built).dump(2) << "\n";
  hw::ClusterSpec loaded = catalog().cluster(file.string(), "test");
  std::filesystem::remove_all(dir);
  return loaded;
}

// The links of a node as (a, b, type, lanes, generation, bandwidth), for comparing two files.
std::vector<std::tuple<std::string, std::string, std::string, int, int, double>> links_of(const hw::ClusterSpec& c) {
  std::vector<std::tuple<std::string, std::string, std::string, int, int, double>> out;
  for (const hw::LinkSpec& l : c.node.links) {
    out.emplace_back(hw::device_name(l.a), hw::device_name(l.b), std::string(hw::name(l.type)), l.lanes, l.generation,
                     l.bw.value ? l.bw.value->value() : -1.0);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TopoCluster, TheProjectMachineComesOutAsTheHandWrittenFile) {
  const hw::ClusterSpec found = round_trip(testing::h200x2(), "h200-sxm", "h200x2-found");
  const hw::ClusterSpec written = catalog().cluster("h200x2", "test");
  EXPECT_EQ(found.name, "h200x2-found");
  EXPECT_EQ(found.gpu.name, "h200-sxm");
  EXPECT_EQ(found.node.device_count, written.node.device_count);
  EXPECT_EQ(links_of(found), links_of(written));  // NV18 at 18 x 25 GB/s; gen5 x16 to one cpu
  EXPECT_EQ(found.layout.tag, hw::SourceTag::kMeasured);
  EXPECT_FALSE(found.transports.pcie_p2p.has_value());  // every pair has NVLink
  const hw::LinkGraph graph = hw::LinkGraph::build(found, 1);
  EXPECT_EQ(graph.path(0, 1).path_class, hw::PathClass::kNvlink);
}

TEST(TopoCluster, OneGpuIsTheSingleGpuFile) {
  const hw::ClusterSpec found = round_trip(testing::h200x1(), "h200-sxm", "one");
  EXPECT_EQ(links_of(found), links_of(catalog().cluster("h200x1", "test")));
}

TEST(TopoCluster, AnNvswitchBaseboardWithPcieSwitchesAndTwoSockets) {
  const hw::ClusterSpec c = round_trip(testing::hgx_h100(), "h100-sxm5", "hgx");
  EXPECT_EQ(c.node.count(hw::DeviceKind::kGpu), 8);
  EXPECT_EQ(c.node.count(hw::DeviceKind::kNvswitch), 1);
  EXPECT_EQ(c.node.count(hw::DeviceKind::kPcieSwitch), 4);  // the GPU pairs (PIX)
  EXPECT_EQ(c.node.count(hw::DeviceKind::kCpu), 2);         // NUMA nodes 0 and 1
  const hw::LinkGraph graph = hw::LinkGraph::build(c, 1);
  EXPECT_EQ(graph.path(0, 7).path_class, hw::PathClass::kNvlink);
  // 8 GPU-to-NVSwitch bundles, 8 GPU-to-switch and 4 switch-to-cpu PCIe links, 1 cpu-to-cpu link.
  EXPECT_EQ(c.node.links.size(), 21u);
}

TEST(TopoCluster, PcieWithoutP2pSaysSo) {
  const hw::ClusterSpec c = round_trip(testing::rtx4090x2(), "rtx4090", "pcie");
  ASSERT_TRUE(c.transports.pcie_p2p.has_value());
  EXPECT_FALSE(*c.transports.pcie_p2p);
  EXPECT_EQ(c.node.count(hw::DeviceKind::kCpu), 2);
  EXPECT_EQ(hw::LinkGraph::build(c, 1).path(0, 1).path_class, hw::PathClass::kHostStaged);
}

TEST(TopoCluster, AnUnknownPcieLinkFallsBackToTheCatalogAndSaysSo) {
  MachineDiscovery m = testing::h200x1();
  m.gpus[0].pcie_max = {};
  m.gpus[0].pcie_source.clear();
  const hw::ClusterSpec c = round_trip(m, "h200-sxm", "nopcie");
  EXPECT_EQ(c.node.links.at(0).generation, 5);  // the catalog's gen5 x16
  EXPECT_EQ(c.node.links.at(0).lanes, 16);
  const hw::ClusterSpec built = cluster_from_discovery(
      m, {"nopcie", "nopcie.json", "h200-sxm", catalog().gpu("h200-sxm", "test"), "2026-12-01"}, catalog().reference());
  bool noted = false;
  for (const std::string& note : built.notes) noted = noted || note.find("the catalog's gen5 x16") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(TopoCluster, GpusOfDifferentModelsAreRefused) {
  MachineDiscovery m = testing::h200x2();
  m.gpus[1].name = "NVIDIA H100 80GB HBM3";
  const TopologyRequest request{"mixed", "mixed.json", "h200-sxm", catalog().gpu("h200-sxm", "test"), "2026-12-01"};
  EXPECT_TRUE(
      commscale::testing::throws_input_error([&] { (void)cluster_from_discovery(m, request, catalog().reference()); },
                                             {"--devices", "NVIDIA H200", "NVIDIA H100 80GB HBM3"}));
}

}  // namespace
}  // namespace commscale

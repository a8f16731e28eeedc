// What doctor expects of each thing it checks (predict/doctor_expect.hpp), by hand from the catalog.
#include <gtest/gtest.h>

#include "hw_test_support.hpp"
#include "predict/doctor_expect.hpp"

namespace commscale::predict {
namespace {

DoctorExpectations expectations(const std::string& cluster, int nodes, std::map<std::string, double> stated = {}) {
  const hw::Catalog& catalog = hw::testing::catalog();
  return DoctorExpectations(catalog, catalog.cluster(cluster, "test"), cluster, nodes, nullptr, std::move(stated));
}

TEST(DoctorExpect, GemmIsTheCatalogRateTimesTheMeasuredFraction) {
  // h200-sxm bf16 dense 989.5 TFLOP/s x 0.67 = 662.965.
  const auto e = expectations("h200x2", 1).gemm_TFLOPS(DataType::kBFloat16);
  ASSERT_TRUE(e);
  EXPECT_NEAR(e->value, 662.965, 1e-9);
  EXPECT_TRUE(e->judged);
}

TEST(DoctorExpect, PcieLinkAndHostCopies) {
  // h200x2: each GPU on PCIe gen5 x16, 64 GB/s per direction (links.json); pinned copies at 0.85 of it.
  const DoctorExpectations e = expectations("h200x2", 1);
  int generation = 0;
  int width = 0;
  ASSERT_TRUE(e.pcie_link(1, &generation, &width));
  EXPECT_EQ(generation, 5);
  EXPECT_EQ(width, 16);
  EXPECT_DOUBLE_EQ(*e.pcie_GBps(5, 16), 64.0);
  EXPECT_DOUBLE_EQ(*e.pcie_GBps(5, 8), 32.0);
  EXPECT_DOUBLE_EQ(*e.pcie_GBps(1, 16), 4.0);  // 2.5 GT/s x 16 x 8/10 / 8: a link stuck at gen1 reads as slow
  EXPECT_NEAR(e.host_copy_GBps(0)->value, 64.0 * 0.85, 1e-9);
}

TEST(DoctorExpect, NvlinkLinksPerGpu) {
  // NV18 between the two H200s; every H200 of the HGX board has its 18 links to the NVSwitch fabric.
  EXPECT_DOUBLE_EQ(expectations("h200x2", 1).nvlink_links(0)->value, 18.0);
  EXPECT_DOUBLE_EQ(expectations("hgx-h200", 1).nvlink_links(7)->value, 18.0);
  EXPECT_DOUBLE_EQ(expectations("h200x1", 1).nvlink_links(0)->value, 0.0);
}

TEST(DoctorExpect, GpuPairAtNcclsPerLinkFigure) {
  // NV18 at NCCL's SM90 20.6 GB/s per link: 370.8.
  EXPECT_NEAR(expectations("h200x2", 1).p2p_copy_GBps(0, 1)->value, 18 * 20.6, 1e-9);
}

TEST(DoctorExpect, CollectivesFromTheCatalogsMeasurementWhereItHasOne) {
  // h200x2 carries nccl-tests' 4 GiB all_reduce (346 GB/s) and all_gather (308): a group of its two GPUs at
  // that size is expected to do the same; at 1 GiB the model answers, and for all_gather on NVLink it is
  // shown, not judged.
  const DoctorExpectations e = expectations("h200x2", 1);
  const Bytes four_gib(4ull << 30);
  EXPECT_DOUBLE_EQ(
      e.collective_busbw(Collective::kAllReduce, four_gib, DataType::kFloat32, {{0, 1}}, "all_reduce").front()->value,
      346.0);
  EXPECT_DOUBLE_EQ(
      e.collective_busbw(Collective::kAllGather, four_gib, DataType::kFloat32, {{0, 1}}, "all_gather").front()->value,
      308.0);
  const auto model =
      e.collective_busbw(Collective::kAllGather, Bytes(1ull << 30), DataType::kFloat32, {{0, 1}}, "all_gather").front();
  ASSERT_TRUE(model);
  EXPECT_FALSE(model->judged);
  const auto all_reduce =
      e.collective_busbw(Collective::kAllReduce, Bytes(1ull << 30), DataType::kFloat32, {{0, 1}}, "all_reduce").front();
  EXPECT_TRUE(all_reduce->judged);
  // The collective model's 1 GiB figure (NVLink Simple at 0.924 of NCCL's 370.8 less its size terms,
  // results/collective-latency: 326 GB/s), below the 4 GiB measurement.
  EXPECT_GT(all_reduce->value, 300.0);
  EXPECT_LT(all_reduce->value, 346.0);
}

TEST(DoctorExpect, PairsAcrossNodesRunAtTheRailsNarrowestLink) {
  // hgx-h200 x 2: GPU k of node 0 to GPU k of node 1, all 8 rails at once. Each rail runs GPU -> its
  // PCIe switch -> its own NDR NIC (400 Gb/s: 50 GB/s) -> network -> ...; NCCL's figure for the gen5 x16
  // hops is 48 GB/s, the narrowest, and no two rails share a link. A broadcast of 1 GiB between two
  // ranks (busbw = algbw) then takes latency + 2^30 / 48e9 s = 22369.6 us + tens of us: just under 48.
  const DoctorExpectations e = expectations("hgx-h200", 2);
  std::vector<std::vector<int>> rails;
  for (int k = 0; k < 8; ++k) rails.push_back({k, 8 + k});
  const auto all = e.collective_busbw(Collective::kBroadcast, Bytes(1ull << 30), DataType::kFloat32, rails, "pair");
  for (const auto& x : all) {
    ASSERT_TRUE(x);
    EXPECT_GT(x->value, 47.8);
    EXPECT_LT(x->value, 48.0);
  }
  EXPECT_DOUBLE_EQ(e.nic_rate_Gbps()->value, 400.0);
}

TEST(DoctorExpect, StatedFiguresOverrideAndNoClusterMeansOnlyThem) {
  const DoctorExpectations with = expectations("hgx-h200", 2, {{"pair", 12.5}, {"gemm", 500.0}});
  const auto pair = with.collective_busbw(Collective::kBroadcast, Bytes(1 << 20), DataType::kFloat32, {{0, 8}}, "pair");
  EXPECT_DOUBLE_EQ(pair.front()->value, 12.5);
  EXPECT_EQ(pair.front()->basis, "--expect pair=12.5");
  EXPECT_DOUBLE_EQ(with.gemm_TFLOPS(DataType::kBFloat16)->value, 500.0);

  const DoctorExpectations none({{"all_reduce", 2.0}}, "none: CPU backend", &hw::testing::catalog().reference());
  EXPECT_FALSE(none.has_cluster());
  EXPECT_FALSE(none.gemm_TFLOPS(DataType::kBFloat16));
  EXPECT_FALSE(
      none.collective_busbw(Collective::kAllReduce, Bytes(1 << 20), DataType::kFloat32, {{-1, -1}}, "node_all_reduce")
          .front());
  EXPECT_DOUBLE_EQ(
      none.collective_busbw(Collective::kAllReduce, Bytes(1 << 20), DataType::kFloat32, {{-1, -1}}, "all_reduce")
          .front()
          ->value,
      2.0);
}

TEST(DoctorExpect, ANodeCountTheClusterCannotHaveLeavesTheNetworkUnexpected) {
  // h200x1 has no network: two nodes of it get no expectation across nodes, and say why.
  const DoctorExpectations e = expectations("h200x1", 2);
  EXPECT_FALSE(
      e.collective_busbw(Collective::kBroadcast, Bytes(1 << 20), DataType::kFloat32, {{0, 1}}, "pair").front());
  ASSERT_FALSE(e.notes().empty());
  EXPECT_NE(e.notes().front().find("no network"), std::string::npos);
}

}  // namespace
}  // namespace commscale::predict

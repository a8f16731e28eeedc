// Rank 0's judgement of what doctor's ranks measured (bench/doctor_gpu.hpp, bench/doctor_node.hpp),
// on made-up measurements of an HGX H100 node (topologies/clusters/hgx-h100.json: H100 SXM, PCIe gen5
// x16 per GPU, 18 NVLink links, 400 Gb/s NICs): the faults the issue names (a PCIe slot trained down
// to x8, NVLink links down, a NIC at half rate, a clock held by a hardware slowdown, an uncorrected
// ECC error, a slow GEMM) must each fail and name the GPU or NIC; a healthy GPU and node pass. Pure:
// no MPI call and no GPU, in the MPI test binary because bench/ is part of commscale_runtime.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/doctor_gpu.hpp"
#include "bench/doctor_node.hpp"
#include "hw/catalog.hpp"

namespace commscale {
namespace {

using predict::CheckStatus;
using predict::DoctorCheck;

const predict::DoctorExpectations& hgx_h100() {
  static const hw::Catalog catalog = hw::Catalog::open(std::string(COMMSCALE_SOURCE_DIR) + "/topologies");
  static const predict::DoctorExpectations e(catalog, catalog.cluster("hgx-h100", "test"), "hgx-h100", 1, nullptr, {});
  return e;
}

// GPU 3 of node07 as a healthy H100 SXM reports it under a sustained GEMM: gen5 x16, 18 links up,
// power capped (a normal reason), no error, 700 TFLOP/s (1.06 of 989.4 x 0.67 = 662.9).
GpuMeasurement healthy_gpu() {
  GpuMeasurement m;
  m.placement.rank = 3;
  m.placement.local_rank = 3;
  m.placement.host = "node07";
  m.placement.device = 3;
  m.placement.gpu_name = "NVIDIA H100 80GB HBM3";
  m.placement.pci_bus_id = "0000:4e:00.0";
  m.placement.compute_capability = 90;
  m.pcie_max = {5, 16};
  m.pcie_loaded = {5, 16};
  m.nvlinks_present = 18;
  m.nvlinks_active = 18;
  m.sm_clock_MHz = 1755;
  m.sm_clock_max_MHz = 1980;
  m.clock_reasons = kClockSwPowerCap;
  m.samples = 80;
  m.errors.ecc_enabled = true;
  m.errors.ecc_uncorrected_volatile = 0;
  m.errors.remap_pending = false;
  m.gemm_TFLOPS = 700.0;
  m.xids = std::vector<std::uint64_t>{};
  return m;
}

// A copy: the checks are often a temporary.
DoctorCheck find(const std::vector<DoctorCheck>& checks, const std::string& name) {
  const auto it = std::find_if(checks.begin(), checks.end(), [&](const DoctorCheck& c) { return c.check == name; });
  if (it == checks.end()) throw std::runtime_error("no check " + name);
  return *it;
}

std::vector<DoctorCheck> judge_gpu(const GpuMeasurement& m) { return gpu_checks(m, hgx_h100(), 0.85); }

TEST(DoctorGpuChecks, AHealthyGpuPassesEveryCheck) {
  const std::vector<DoctorCheck> checks = judge_gpu(healthy_gpu());
  for (const char* name : {"identity", "pcie_link", "nvlink_links", "clocks", "ecc", "gemm"}) {
    EXPECT_EQ(find(checks, name).status, CheckStatus::kPass) << name << ": " << find(checks, name).detail;
  }
  EXPECT_EQ(xid_check(healthy_gpu()).status, CheckStatus::kPass);
}

TEST(DoctorGpuChecks, APcieSlotTrainedDownToX8Fails) {
  // gen5 x8 is 32 GB/s of the cluster's gen5 x16 64 (links.json): 0.5 < 0.85.
  GpuMeasurement m = healthy_gpu();
  m.pcie_loaded = {5, 8};
  const DoctorCheck c = find(judge_gpu(m), "pcie_link");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_DOUBLE_EQ(*c.measured, 32.0);
  EXPECT_DOUBLE_EQ(*c.expected, 64.0);
  EXPECT_EQ(c.place.rank, 3);
  EXPECT_EQ(c.place.pci_bus_id, "0000:4e:00.0");
  EXPECT_NE(c.detail.find("gen5 x8"), std::string::npos) << c.detail;
}

TEST(DoctorGpuChecks, OneNvlinkLinkDownFails) {
  // Links are whole: 17 of 18 fails, whatever --min-ratio says.
  GpuMeasurement m = healthy_gpu();
  m.nvlinks_active = 17;
  const DoctorCheck c = find(judge_gpu(m), "nvlink_links");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_DOUBLE_EQ(*c.expected, 18.0);
  EXPECT_DOUBLE_EQ(c.threshold, 1.0);
}

TEST(DoctorGpuChecks, AHardwareSlowdownFailsAPowerCapDoesNot) {
  GpuMeasurement m = healthy_gpu();
  m.clock_reasons = kClockSwPowerCap | kClockHwSlowdown;
  const DoctorCheck c = find(judge_gpu(m), "clocks");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_NE(c.detail.find(describe_clock_reasons(kClockHwSlowdown)), std::string::npos) << c.detail;
}

TEST(DoctorGpuChecks, AnUncorrectedEccErrorOrAnXidFails) {
  GpuMeasurement m = healthy_gpu();
  m.errors.ecc_uncorrected_volatile = 2;
  EXPECT_EQ(find(judge_gpu(m), "ecc").status, CheckStatus::kFail);
  m = healthy_gpu();
  m.errors.remap_failed = true;
  EXPECT_EQ(find(judge_gpu(m), "ecc").status, CheckStatus::kFail);
  m = healthy_gpu();
  m.xids = std::vector<std::uint64_t>{79};  // "GPU has fallen off the bus"
  const DoctorCheck x = xid_check(m);
  EXPECT_EQ(x.status, CheckStatus::kFail);
  EXPECT_NE(x.detail.find("XID 79"), std::string::npos);
}

TEST(DoctorGpuChecks, ASlowGemmFailsAndTheWrongGpuModelFails) {
  // 500 / 662.9 = 0.75 < 0.85; 700 passed above (1.06).
  GpuMeasurement m = healthy_gpu();
  m.gemm_TFLOPS = 500.0;
  const DoctorCheck gemm = find(judge_gpu(m), "gemm");
  EXPECT_EQ(gemm.status, CheckStatus::kFail);
  EXPECT_NEAR(*gemm.expected, 989.4 * 0.67, 1.0);
  m = healthy_gpu();
  m.placement.gpu_name = "NVIDIA A100-SXM4-80GB";
  EXPECT_EQ(find(judge_gpu(m), "identity").status, CheckStatus::kFail);
}

TEST(DoctorGpuChecks, WithoutNvmlTheStateChecksSayTheyDidNotRun) {
  GpuMeasurement m = healthy_gpu();
  m.nvml_status = "libnvidia-ml.so.1 not found";
  m.pcie_loaded = {};
  m.clock_reasons.reset();
  const std::vector<DoctorCheck> checks = judge_gpu(m);
  for (const char* name : {"pcie_link", "nvlink_links", "clocks", "ecc"}) {
    EXPECT_EQ(find(checks, name).status, CheckStatus::kNotRun) << name;
    EXPECT_NE(find(checks, name).detail.find("libnvidia-ml.so.1 not found"), std::string::npos) << name;
  }
  EXPECT_EQ(find(checks, "gemm").status, CheckStatus::kPass);  // the GEMM needs no NVML
}

DiscoveredNic port(const std::string& name, double rate_Gbps) {
  DiscoveredNic n;
  n.name = name;
  n.kind = "InfiniBand";
  n.pci_bus_id = "0000:" + name.substr(5, 1) + "a:00.0";
  n.pcie_max = {5, 16};
  n.pcie_current = {5, 16};
  n.rate_Gbps = rate_Gbps;
  n.state = "ACTIVE";
  n.active = true;
  n.rate_source = "/sys/class/infiniband/" + name + "/rate";
  return n;
}

std::vector<DoctorCheck> judge_node(const std::vector<DiscoveredNic>& nics) {
  NodeMeasurement m;
  m.host = "node07";
  m.nics.nics = nics;
  m.copies_status = "not measured in this test";
  return node_checks({m}, hgx_h100(), 0.85);
}

TEST(DoctorNodeChecks, ANicAtHalfRateFailsAndIsNamed) {
  // hgx-h100: 400 Gb/s ports. mlx5_2 trained to 200: 0.5 < 0.85; its neighbours pass.
  const std::vector<DoctorCheck> checks =
      judge_node({port("mlx5_0:1", 400), port("mlx5_1:1", 400), port("mlx5_2:1", 200)});
  std::vector<const DoctorCheck*> failed;
  for (const DoctorCheck& c : checks) {
    if (c.status == CheckStatus::kFail) failed.push_back(&c);
  }
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]->check, "nic_rate");
  EXPECT_EQ(failed[0]->place.host, "node07");
  EXPECT_EQ(failed[0]->place.nic, "mlx5_2:1");
  EXPECT_DOUBLE_EQ(*failed[0]->expected, 400.0);
  EXPECT_DOUBLE_EQ(*failed[0]->ratio(), 0.5);
}

TEST(DoctorNodeChecks, APortDownOrANicOnANarrowSlotFails) {
  DiscoveredNic down = port("mlx5_1:1", 400);
  down.active = false;
  down.state = "DOWN";
  down.rate_Gbps.reset();
  DiscoveredNic narrow = port("mlx5_3:1", 400);
  narrow.pcie_current = {5, 8};
  const std::vector<DoctorCheck> checks = judge_node({port("mlx5_0:1", 400), down, narrow});
  int failed = 0;
  for (const DoctorCheck& c : checks) {
    if (c.status != CheckStatus::kFail) continue;
    ++failed;
    const bool expected_fail =
        (c.check == "nic_state" && c.place.nic == "mlx5_1:1") || (c.check == "nic_pcie" && c.place.nic == "mlx5_3:1");
    EXPECT_TRUE(expected_fail) << c.check << " " << c.subject;
  }
  EXPECT_EQ(failed, 2);
}

TEST(DoctorNodeChecks, AManagementEthernetPortIsShownNotJudged) {
  // A 1 Gb/s Ethernet port without RDMA is not on the GPU network: shown, not held to 400 Gb/s.
  DiscoveredNic eth;
  eth.name = "eno1";
  eth.kind = "Ethernet";
  eth.pci_bus_id = "0000:02:00.0";
  eth.pcie_max = {3, 1};
  eth.pcie_current = {3, 1};
  eth.rate_Gbps = 1.0;
  eth.state = "up";
  eth.active = true;
  const std::vector<DoctorCheck> checks = judge_node({port("mlx5_0:1", 400), eth});
  for (const DoctorCheck& c : checks) EXPECT_NE(c.status, CheckStatus::kFail) << c.check << " " << c.subject;
  const auto rate = std::find_if(checks.begin(), checks.end(),
                                 [](const DoctorCheck& c) { return c.check == "nic_rate" && c.place.nic == "eno1"; });
  ASSERT_NE(rate, checks.end());
  EXPECT_EQ(rate->status, CheckStatus::kInfo);
  EXPECT_FALSE(rate->expected);
}

}  // namespace
}  // namespace commscale

// The GPU x GPU matrix of `commscale topo` from hand-made discoveries: PCI bus ids as CUDA, NVML and
// sysfs write them, PCIe relations from sysfs paths (each case derived in its comment), NVLink
// bundles direct and through NVSwitch, and the text, JSON and CSV reporters against golden patterns.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "discovery_fixtures.hpp"
#include "hw/topo_matrix.hpp"
#include "report/topo_reporters.hpp"

namespace commscale {
namespace {

using testing::h200x2;
using testing::hgx_h100;
using testing::rtx4090x2;
using Path = std::vector<std::string>;

TEST(TopoMatrix, BusIdsOfCudaNvmlAndSysfsAgree) {
  EXPECT_EQ(normalize_pci_bus_id("0000:3B:00.0"), "0000:3b:00.0");      // CUDA
  EXPECT_EQ(normalize_pci_bus_id("00000000:3B:00.0"), "0000:3b:00.0");  // NVML
  EXPECT_EQ(normalize_pci_bus_id("0000:3b:00.0\n"), "0000:3b:00.0");    // sysfs, read as a line
  EXPECT_EQ(normalize_pci_bus_id("3b:00.0"), "0000:3b:00.0");           // no domain
  EXPECT_EQ(normalize_pci_bus_id("1:3b:00.0"), "0001:3b:00.0");
}

TEST(TopoMatrix, PcieGenerationFromSysfsSpeed) {
  EXPECT_EQ(pcie_generation_from_speed("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(pcie_generation_from_speed("5.0 GT/s PCIe"), 2);
  EXPECT_EQ(pcie_generation_from_speed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(pcie_generation_from_speed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(pcie_generation_from_speed("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(pcie_generation_from_speed("64.0 GT/s PCIe"), 6);
  EXPECT_EQ(pcie_generation_from_speed("5 GT/s"), 2);
  EXPECT_EQ(pcie_generation_from_speed("Unknown"), std::nullopt);
  EXPECT_EQ(pcie_generation_from_speed(""), std::nullopt);
  EXPECT_EQ(pcie_generation_from_speed("12.0 GT/s"), std::nullopt);
}

TEST(TopoMatrix, RelationsFromSysfsPaths) {
  // One switch: root, root port, upstream port, then each GPU behind its own downstream port. Below
  // the deepest shared component (the upstream port) each side passes one bridge: PIX.
  const Path a = {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"};
  const Path b = {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0"};
  EXPECT_EQ(relation_from_pci_paths(a, 0, b, 0), PcieRelation::kSingleBridge);
  // Two switch levels: the GPUs share only the first switch; each passes three bridges below it: PXB.
  const Path c = {"pci0000:00",   "0000:00:01.0", "0000:01:00.0", "0000:02:00.0",
                  "0000:03:00.0", "0000:04:00.0", "0000:05:00.0"};
  const Path d = {"pci0000:00",   "0000:00:01.0", "0000:01:00.0", "0000:02:01.0",
                  "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"};
  EXPECT_EQ(relation_from_pci_paths(c, 0, d, 0), PcieRelation::kMultipleBridges);
  // Different root ports of one root complex: only the host bridge is shared: PHB.
  EXPECT_EQ(relation_from_pci_paths(Path{"pci0000:00", "0000:00:01.0", "0000:18:00.0"}, 0,
                                    Path{"pci0000:00", "0000:00:02.0", "0000:2a:00.0"}, 0),
            PcieRelation::kHostBridge);
  // Different root complexes: NODE on one NUMA node (or both unknown), SYS across nodes.
  const Path e = {"pci0000:00", "0000:00:01.0", "0000:01:00.0"};
  const Path f = {"pci0000:80", "0000:80:01.0", "0000:81:00.0"};
  EXPECT_EQ(relation_from_pci_paths(e, 0, f, 0), PcieRelation::kNumaNode);
  EXPECT_EQ(relation_from_pci_paths(e, -1, f, -1), PcieRelation::kNumaNode);
  EXPECT_EQ(relation_from_pci_paths(e, 0, f, 1), PcieRelation::kSystem);
  EXPECT_EQ(relation_from_pci_paths(Path{}, 0, f, 0), PcieRelation::kUnknown);
}

TEST(TopoMatrix, CellsAsNvidiaSmiPrintsThem) {
  const MachineDiscovery two = h200x2();
  EXPECT_EQ(topo_cell(two, 0, 0), "X");
  EXPECT_EQ(topo_cell(two, 0, 1), "NV18");
  EXPECT_EQ(topo_cell(two, 1, 0), "NV18");
  const NvlinkConnection direct = nvlink_connection(two, 0, 1);
  EXPECT_EQ(direct.lanes, 18);
  EXPECT_FALSE(direct.via_switch);

  const MachineDiscovery hgx = hgx_h100();
  EXPECT_EQ(topo_cell(hgx, 0, 7), "NV18");
  EXPECT_TRUE(nvlink_connection(hgx, 0, 7).via_switch);

  const MachineDiscovery pcie = rtx4090x2();
  EXPECT_EQ(topo_cell(pcie, 0, 1), "SYS");
  EXPECT_EQ(nvlink_connection(pcie, 0, 1).lanes, 0);

  // In a VM NVML may name the far ends by the host's bus ids: NVML's P2P status then says which pair
  // the links join (two GPUs: all 18 are between them).
  MachineDiscovery vm = h200x2();
  for (DiscoveredGpu& g : vm.gpus) {
    for (NvlinkInfo& l : g.nvlinks) l.remote_pci_bus_id = "0000:c1:00.0";
  }
  EXPECT_EQ(topo_cell(vm, 0, 1), "NV18");
  vm.peers[0][1].nvlink_p2p = false;
  EXPECT_EQ(topo_cell(vm, 0, 1), "PHB");

  MachineDiscovery inactive = h200x2();
  for (NvlinkInfo& l : inactive.gpus[0].nvlinks) l.active = l.link >= 6;  // 6 links down
  EXPECT_EQ(topo_cell(inactive, 0, 1), "NV12");
  EXPECT_EQ(active_nvlinks(inactive.gpus[0]), 12);
}

TEST(TopoReporters, TextHasTheMatrixP2pAndLegend) {
  RunContext c;
  c.commscale_version = "0.1.0";
  c.git_sha = "abc123";
  MachineDiscovery m = h200x2();
  m.gpus[0].catalog_gpu = m.gpus[1].catalog_gpu = "h200-sxm";
  const std::string text = format_topo_text(m, c);
  EXPECT_NE(text.find("# commscale 0.1.0 (abc123) topo on node01: 2 GPUs; driver 580.159.03, CUDA 13.0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("GPU0  X     NV18  0     gen5 x16  gen5 x16  18 of 18 active, 26562 MB/s per link"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("GPU1  NV18  X"), std::string::npos) << text;
  EXPECT_NE(text.find("P2P   GPU0  GPU1\nGPU0  X     yes\nGPU1  yes   X"), std::string::npos) << text;
  EXPECT_NE(text.find("NVIDIA H200  0000:18:00.0"), std::string::npos) << text;
  EXPECT_NE(text.find("h200-sxm"), std::string::npos) << text;
  EXPECT_NE(text.find("  NV#  = Connection traversing a bonded set of # NVLinks"), std::string::npos) << text;
  EXPECT_NE(text.find("  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge"), std::string::npos);
}

TEST(TopoReporters, NoGpuSaysWhy) {
  MachineDiscovery m;
  m.host = "laptop";
  m.no_gpu_reason = "no GPU visible: cudaGetDeviceCount returned cudaErrorInsufficientDriver";
  RunContext c;
  c.commscale_version = "0.1.0";
  c.git_sha = "abc";
  EXPECT_EQ(format_topo_text(m, c),
            "# commscale 0.1.0 (abc) topo on laptop: no GPU\n"
            "# no GPU visible: cudaGetDeviceCount returned cudaErrorInsufficientDriver\n");
  const nlohmann::json j = topo_json(m, c);
  EXPECT_TRUE(j["gpus"].empty());
  EXPECT_EQ(j["no_gpu_reason"], m.no_gpu_reason);
  EXPECT_TRUE(j["nvml_status"].is_null());
  EXPECT_EQ(topo_csv(m), "gpu_a,gpu_b,link,nvlink_lanes,via_nvswitch,pcie_relation,p2p,performance_rank\n");
}

TEST(TopoReporters, JsonAndCsvPairs) {
  MachineDiscovery m = rtx4090x2();
  m.gpus[1].catalog_gpu = "rtx4090";
  const nlohmann::json j = topo_json(m, RunContext{});
  EXPECT_EQ(j["schema_version"], kTopoSchemaVersion);
  EXPECT_EQ(j["kind"], "commscale-topo");
  ASSERT_TRUE(j.contains("context"));
  ASSERT_EQ(j["pairs"].size(), 2u);
  EXPECT_EQ(j["pairs"][0]["link"], "SYS");
  EXPECT_EQ(j["pairs"][0]["can_access_peer"], false);
  EXPECT_EQ(j["gpus"][1]["numa_node"], 1);
  EXPECT_EQ(j["gpus"][1]["catalog_gpu"], "rtx4090");
  EXPECT_EQ(j["gpus"][1]["pcie_max"]["generation"], 4);
  EXPECT_EQ(topo_csv(m),
            "gpu_a,gpu_b,link,nvlink_lanes,via_nvswitch,pcie_relation,p2p,performance_rank\n"
            "0,1,SYS,0,0,SYS,0,0\n"
            "1,0,SYS,0,0,SYS,0,0\n");
}

}  // namespace
}  // namespace commscale

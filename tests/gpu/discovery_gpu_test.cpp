// Discovery of this machine (topo): sysfs against a fake tree (runs anywhere), NVML where it loads,
// and the real GPUs where they are visible. Under mpirun only world rank 0 opens every GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "hw/topo_matrix.hpp"
#include "runtime/discovery.hpp"
#include "runtime/gpu.hpp"
#include "runtime/mpi.hpp"
#include "runtime/nvml_library.hpp"
#include "runtime/sysfs_pci.hpp"

namespace commscale {
namespace {

void write(const std::filesystem::path& file, const std::string& text) { std::ofstream(file) << text << "\n"; }

TEST(Sysfs, ReadsThePathNumaNodeAndLinksOfAFakeTree) {
  const std::filesystem::path root = std::filesystem::temp_directory_path() /
                                     fmt::format("commscale-sysfs-{}-{}", ::getpid(), MpiComm::world().rank());
  const std::filesystem::path device = root / "devices/pci0000:00/0000:00:01.0/0000:18:00.0";
  std::filesystem::create_directories(device);
  std::filesystem::create_directories(root / "bus/pci/devices");
  std::filesystem::create_directory_symlink(device, root / "bus/pci/devices/0000:18:00.0");
  write(device / "numa_node", "1");
  write(device / "max_link_speed", "32.0 GT/s PCIe");
  write(device / "max_link_width", "16");
  write(device / "current_link_speed", "2.5 GT/s PCIe");
  write(device / "current_link_width", "16");

  const SysfsPciFacts facts = read_sysfs_pci("00000000:18:00.0", root / "bus/pci/devices");  // NVML's form
  EXPECT_EQ(facts.path, (std::vector<std::string>{"pci0000:00", "0000:00:01.0", "0000:18:00.0"}));
  EXPECT_EQ(facts.numa_node, 1);
  EXPECT_EQ(facts.max, (PcieLink{5, 16}));
  EXPECT_EQ(facts.current, (PcieLink{1, 16}));
  const SysfsPciFacts missing = read_sysfs_pci("0000:99:00.0", root / "bus/pci/devices");
  EXPECT_TRUE(missing.path.empty());
  EXPECT_EQ(missing.numa_node, -1);
  EXPECT_FALSE(missing.max.known());
  std::filesystem::remove_all(root);
}

TEST(Nvml, LoadsOrSaysWhyNot) {
  std::string why;
  const std::unique_ptr<NvmlLibrary> nvml = NvmlLibrary::open(&why);
  if (nvml == nullptr) {
    EXPECT_FALSE(why.empty());
    GTEST_SKIP() << why;
  }
  EXPECT_FALSE(nvml->driver_version().empty());
  EXPECT_FALSE(nvml->gpu("0000:ff:1f.7").found);  // no GPU there
}

class Discovery : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (visible_gpu_count(&why) == 0) GTEST_SKIP() << why;
    // One process opens every GPU: under mpirun, rank 0 alone.
    if (MpiComm::world().rank() != 0) GTEST_SKIP() << "discovery runs on world rank 0";
  }
};

TEST_F(Discovery, DescribesEveryVisibleGpu) {
  std::string why;
  const int count = visible_gpu_count(&why);
  const MachineDiscovery m = discover_machine({});
  ASSERT_EQ(static_cast<int>(m.gpus.size()), count);
  EXPECT_TRUE(m.no_gpu_reason.empty());
  EXPECT_FALSE(m.cuda_driver.empty());
  for (const DiscoveredGpu& g : m.gpus) {
    EXPECT_EQ(g.pci_bus_id, normalize_pci_bus_id(g.pci_bus_id)) << g.name;
    EXPECT_GT(g.memory.count(), 0u);
    EXPECT_GT(g.sm_count, 0);
    EXPECT_TRUE(g.pcie_max.known()) << g.name << " " << g.pci_bus_id << " (" << g.pcie_source << ")";
  }
  ASSERT_EQ(m.peers.size(), m.gpus.size());
  const MachineDiscovery last = discover_machine({count - 1});
  ASSERT_EQ(last.gpus.size(), 1u);
  EXPECT_EQ(last.gpus[0].device, count - 1);
}

TEST_F(Discovery, FindsNv18BetweenTwoH200s) {
  const MachineDiscovery m = discover_machine({});
  if (m.gpus.size() < 2 || m.gpus[0].name.find("H200") == std::string::npos) GTEST_SKIP() << "needs 2 H200";
  ASSERT_TRUE(m.nvml_status.empty()) << m.nvml_status;
  EXPECT_EQ(active_nvlinks(m.gpus[0]), 18);
  EXPECT_EQ(nvlink_connection(m, 0, 1).lanes, 18);
  EXPECT_EQ(topo_cell(m, 0, 1), "NV18");
  EXPECT_TRUE(m.peers[0][1].can_access_peer);
  EXPECT_EQ(m.gpus[0].pcie_max, (PcieLink{5, 16}));
}

}  // namespace
}  // namespace commscale

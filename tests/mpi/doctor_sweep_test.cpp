// What doctor adds to bench's sweep, under real mpirun on the CPU backend: explicit groups (pairs in
// either order, and ranks left alone), each rank's own loop time, and a rank made slow by
// --inject-slow-rank; and NIC discovery's sysfs reading on a made-up tree.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../support/sweep_harness.hpp"
#include "runtime/nic_discovery.hpp"

namespace commscale {
namespace {

using testing::run_sweep;

// Pairs (1, 0), (3, 2), ...: the higher rank first, so it is the broadcast's root; an odd rank out alone.
std::vector<std::vector<int>> reversed_pairs(int ranks) {
  std::vector<std::vector<int>> groups;
  for (int r = 0; r + 1 < ranks; r += 2) groups.push_back({r + 1, r});
  if (ranks % 2 == 1) groups.push_back({ranks - 1});
  return groups;
}

BenchOptions broadcast_options(int ranks) {
  BenchOptions o;
  o.collectives = {Collective::kBroadcast};
  o.sizes = {Bytes(64 * 1024)};
  o.iters = 3;
  o.warmup = 1;
  o.groups = reversed_pairs(ranks);
  return o;
}

TEST(DoctorSweep, ExplicitGroupsAreCheckedAndTimedRankByRank) {
  const MpiComm world = MpiComm::world();
  const auto outcome = run_sweep(broadcast_options(world.size()), BackendChoice::kCpu);
  EXPECT_EQ(outcome.summary.wrong, 0u);
  if (world.rank() != 0) return;
  ASSERT_EQ(outcome.rows.size(), 1u);
  const PlacementResult& p = outcome.rows[0].out_of_place;
  EXPECT_TRUE(p.checked);
  ASSERT_EQ(p.rank_time_us.size(), static_cast<std::size_t>(world.size()));
  for (double t : p.rank_time_us) EXPECT_GT(t, 0.0);
}

TEST(DoctorSweep, ASlowRankSlowsItsGroupAlone) {
  const MpiComm world = MpiComm::world();
  if (world.size() < 4) GTEST_SKIP() << "needs two pairs";
  BenchOptions o = broadcast_options(world.size());
  o.delay = RankDelay{1, 20000.0};  // 20 ms before each collective call of rank 1
  const auto outcome = run_sweep(o, BackendChoice::kCpu);
  EXPECT_EQ(outcome.summary.wrong, 0u);
  if (world.rank() != 0) return;
  const std::vector<double>& t = outcome.rows.at(0).out_of_place.rank_time_us;
  // Ranks 0 and 1 (one pair) wait 20 ms per iteration; ranks 2 and 3 (the other pair) do not.
  EXPECT_GE(t.at(1), 20000.0);
  EXPECT_GE(t.at(0), 15000.0);
  EXPECT_LT(t.at(2), 10000.0);
  EXPECT_LT(t.at(3), 10000.0);
}

TEST(NicDiscovery, RdmaPortsAndInterfacesFromSysfs) {
  const std::filesystem::path root = std::filesystem::path(::testing::TempDir()) /
                                     ("sysfs-" + std::to_string(MpiComm::world().rank()));
  const auto write = [&](const std::filesystem::path& file, const std::string& text) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  };
  write(root / "ib/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)");
  write(root / "ib/mlx5_0/ports/1/state", "4: ACTIVE");
  write(root / "ib/mlx5_0/ports/1/link_layer", "InfiniBand");
  write(root / "ib/mlx5_0/ports/2/rate", "200 Gb/sec (4X HDR)");
  write(root / "ib/mlx5_0/ports/2/state", "1: DOWN");
  write(root / "ib/mlx5_0/ports/2/link_layer", "InfiniBand");
  const std::vector<DiscoveredNic> ports = rdma_ports("mlx5_0", root / "ib");
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].name, "mlx5_0:1");
  EXPECT_EQ(ports[0].kind, "InfiniBand");
  EXPECT_TRUE(ports[0].active);
  EXPECT_DOUBLE_EQ(*ports[0].rate_Gbps, 400.0);
  EXPECT_EQ(ports[1].state, "DOWN");
  EXPECT_FALSE(ports[1].active);
  EXPECT_FALSE(ports[1].rate_Gbps);  // a port that is down has no rate worth judging

  write(root / "net/eth3/speed", "100000");
  write(root / "net/eth3/operstate", "up");
  const DiscoveredNic eth = network_interface("eth3", root / "net");
  EXPECT_TRUE(eth.active);
  EXPECT_DOUBLE_EQ(*eth.rate_Gbps, 100.0);  // Mb/s
  write(root / "net/eth4/speed", "-1");
  write(root / "net/eth4/operstate", "down");
  EXPECT_FALSE(network_interface("eth4", root / "net").rate_Gbps);
  EXPECT_FALSE(parse_ib_rate_Gbps("Gb/sec"));
}

}  // namespace
}  // namespace commscale

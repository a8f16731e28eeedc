// Paths, rings and trees on the link graph against values derived by hand from the link figures:
// NVLink 25 GB/s per link per direction (A100, H100/H200: [AIB], [HIB], [H200]), RTX 3090 bridge
// 112.5 GB/s total over 4 links = 14.0625 per link per direction [GWP], PCIe x16 per direction gen3
// 15.75, gen4 31.5, gen5 64 (links.json), NIC rate / 8. Latencies are links.json's, per link traversed:
// NVLink 0.6 us, PCIe 1.0, between sockets 1.0, network 2.7 (placeholders), socket loop 8.3 (measured).

#include <gtest/gtest.h>

#include <vector>

#include "core/error.hpp"
#include "hw_test_support.hpp"

namespace commscale::hw {
namespace {

using testing::catalog;
using testing::graph;

std::vector<std::string> route(const LinkGraph& g, const Path& p) {
  std::vector<std::string> names = {g.device(g.gpu_device(p.src)).name};
  for (const Hop& h : p.hops) {
    const Link& l = g.link(h.link);
    names.push_back(g.device(h.direction == Direction::kAtoB ? l.b : l.a).name);
  }
  return names;
}

TEST(HwLinkGraph, NvswitchPath) {
  // HGX A100: gpu0 -> nvswitch0 -> gpu5, each link bundling all 12 NVLink links: 12 x 25 = 300 GB/s per
  // direction, the same on both hops; latency 2 x 0.6 = 1.2 us.
  const LinkGraph g = graph("hgx-a100");
  const Path p = g.path(0, 5);
  EXPECT_EQ(p.path_class, PathClass::kNvlink);
  EXPECT_TRUE(p.p2p());
  EXPECT_EQ(route(g, p), (std::vector<std::string>{"n0.gpu0", "n0.nvswitch0", "n0.gpu5"}));
  EXPECT_DOUBLE_EQ(p.bw.value(), 300.0);
  EXPECT_NEAR(to_us(p.latency), 1.2, 1e-9);
  // HGX H200: 18 links: 18 x 25 = 450 GB/s.
  EXPECT_DOUBLE_EQ(graph("hgx-h200").path(3, 6).bw.value(), 450.0);
}

TEST(HwLinkGraph, ProjectMachineNv18) {
  // h200x2: one bundle of 18 NVLink 4 links, gpu0 -> gpu1 directly: 18 x 25 = 450 GB/s, 0.6 us.
  const LinkGraph g = graph("h200x2");
  const Path p = g.path(1, 0);
  EXPECT_EQ(p.path_class, PathClass::kNvlink);
  EXPECT_EQ(p.hops.size(), 1u);
  EXPECT_EQ(p.hops[0].direction, Direction::kBtoA);  // the link is gpu0 -> gpu1 in the file
  EXPECT_DOUBLE_EQ(p.bw.value(), 450.0);
  EXPECT_NEAR(to_us(p.latency), 0.6, 1e-9);
}

TEST(HwLinkGraph, BridgedPairAndHostStagedNeighbours) {
  // 4x RTX 3090, bridges on 0-1 and 2-3: 0 -> 1 over the bridge, 4 x 14.0625 = 56.25 GB/s per direction
  // (112.5 GB/s total / 2). 0 -> 2: no NVLink, P2P unclear (U, counted as no), so host-staged:
  // gpu0 -> cpu0 -> gpu2, two gen4 x16 crossings, min(31.5, 31.5) = 31.5 GB/s, 2 x 1.0 = 2 us.
  const LinkGraph g = graph("rtx3090-4x-nvlink-pairs");
  const Path bridged = g.path(0, 1);
  EXPECT_EQ(bridged.path_class, PathClass::kNvlink);
  EXPECT_DOUBLE_EQ(bridged.bw.value(), 56.25);
  const Path staged = g.path(0, 2);
  EXPECT_EQ(staged.path_class, PathClass::kHostStaged);
  EXPECT_FALSE(staged.p2p());
  EXPECT_EQ(route(g, staged), (std::vector<std::string>{"n0.gpu0", "n0.cpu0", "n0.gpu2"}));
  EXPECT_DOUBLE_EQ(staged.bw.value(), 31.5);
  EXPECT_NEAR(to_us(staged.latency), 2.0, 1e-9);
  EXPECT_EQ(nccl_hw_class(staged.path_class), NcclHwClass::kPci);
}

TEST(HwLinkGraph, HostStagedPcieThroughTheDestinationsCpu) {
  // 8x RTX 4090, four GPUs per socket, no P2P. 0 -> 1: gpu0 -> cpu0 -> gpu1, 31.5 GB/s.
  // 0 -> 4 crosses sockets and is staged in the destination's host memory (cpu1), as NCCL does:
  // gpu0 -> cpu0 -> cpu1 -> gpu4; min(31.5, 64 between sockets, 31.5) = 31.5; 1.0 + 1.0 + 1.0 = 3 us.
  const LinkGraph g = graph("rtx4090-8x-pcie");
  EXPECT_EQ(g.path(0, 1).path_class, PathClass::kHostStaged);
  EXPECT_DOUBLE_EQ(g.path(0, 1).bw.value(), 31.5);
  const Path across = g.path(0, 4);
  EXPECT_EQ(route(g, across), (std::vector<std::string>{"n0.gpu0", "n0.cpu0", "n0.cpu1", "n0.gpu4"}));
  EXPECT_DOUBLE_EQ(across.bw.value(), 31.5);
  EXPECT_NEAR(to_us(across.latency), 3.0, 1e-9);
  // RTX 5090 on gen5 x16: 64 GB/s per direction.
  EXPECT_DOUBLE_EQ(graph("rtx5090-8x-pcie").path(0, 1).bw.value(), 64.0);
}

TEST(HwLinkGraph, ProjectMachineVariants) {
  // h200x2-nop2p: NVLink exists but P2P is off (NCCL_P2P_DISABLE=1): gpu0 -> cpu0 -> gpu1 at gen5 x16,
  // 64 GB/s per direction (measured busbw 27.0 is kept as a measurement, not used here), 2 us.
  const Path staged = graph("h200x2-nop2p").path(0, 1);
  EXPECT_EQ(staged.path_class, PathClass::kHostStaged);
  EXPECT_EQ(staged.hops.size(), 2u);
  EXPECT_DOUBLE_EQ(staged.bw.value(), 64.0);
  EXPECT_NEAR(to_us(staged.latency), 2.0, 1e-9);
  // h200x2-sockets: P2P and SHM off: gpu0 -> cpu0, the socket loop (3.0 GB/s, M), cpu0 -> gpu1;
  // min(64, 3, 64) = 3 GB/s; 1.0 + 8.3 + 1.0 = 10.3 us.
  const LinkGraph g = graph("h200x2-sockets");
  const Path socket = g.path(0, 1);
  EXPECT_EQ(socket.path_class, PathClass::kSocket);
  EXPECT_EQ(route(g, socket), (std::vector<std::string>{"n0.gpu0", "n0.cpu0", "n0.cpu0", "n0.gpu1"}));
  EXPECT_DOUBLE_EQ(socket.bw.value(), 3.0);
  EXPECT_NEAR(to_us(socket.latency), 10.3, 1e-9);
  EXPECT_EQ(nccl_hw_class(socket.path_class), NcclHwClass::kNet);
  // Both ranks send at once in a ring of two, in opposite directions of the loop: no sharing.
  const std::vector<int> both = {0, 1};
  EXPECT_DOUBLE_EQ(g.ring(both).shared_bw.value(), 3.0);
}

TEST(HwLinkGraph, PcieP2pOnlyUnderASwitch) {
  // Fixture: 4x L40S (P2P allowed, S), gpu0-1 under pcie_switch0, gpu2-3 under pcie_switch1, both
  // switches on cpu0. 0 -> 1 stays under the switch: P2P, gpu0 -> pcie_switch0 -> gpu1, 31.5 GB/s.
  // 0 -> 2 would cross the CPU, which NCCL's default P2P level excludes: host-staged,
  // gpu0 -> pcie_switch0 -> cpu0 -> pcie_switch1 -> gpu2, 31.5 GB/s, 4 x 1.0 = 4 us.
  const LinkGraph g = LinkGraph::build(catalog().cluster(testing::kFixtures + "l40s_4x_pcie_switches.json", "test"), 1);
  const Path p2p = g.path(0, 1);
  EXPECT_EQ(p2p.path_class, PathClass::kPcie);
  EXPECT_EQ(route(g, p2p), (std::vector<std::string>{"n0.gpu0", "n0.pcie_switch0", "n0.gpu1"}));
  EXPECT_DOUBLE_EQ(p2p.bw.value(), 31.5);
  const Path staged = g.path(0, 2);
  EXPECT_EQ(staged.path_class, PathClass::kHostStaged);
  EXPECT_EQ(staged.hops.size(), 4u);
  EXPECT_NEAR(to_us(staged.latency), 4.0, 1e-9);
}

TEST(HwLinkGraph, PcieP2pSetOnTheClusterPassesThroughCpus) {
  // rtx4090-8x-pcie: gpu0-3 on cpu0's root ports, gpu4-7 on cpu1's, gen4 x16 (31.5 GB/s). The catalog
  // allows no P2P on a 4090: host-staged. transports.pcie_p2p=true (a P2P-enabled driver, run with
  // NCCL_P2P_LEVEL=SYS as the published runs were) makes every pair PCIe P2P: 0 -> 1 through cpu0's
  // root complex, gpu0 -> cpu0 -> gpu1, 31.5 GB/s, 2 x 1.0 us; 0 -> 5 also across the sockets,
  // gpu0 -> cpu0 -> cpu1 -> gpu5, min(31.5, 64) GB/s, 3 x 1.0 us.
  EXPECT_EQ(graph("rtx4090-8x-pcie").path(0, 1).path_class, PathClass::kHostStaged);
  const ClusterSpec patched =
      catalog().cluster("rtx4090-8x-pcie", "test", parse_overrides({"transports.pcie_p2p=true"}, "--set"));
  EXPECT_TRUE(patched.pcie_p2p_through_cpus());
  const LinkGraph g = LinkGraph::build(patched, 1);
  const Path near = g.path(0, 1);
  EXPECT_EQ(near.path_class, PathClass::kPcie);
  EXPECT_EQ(route(g, near), (std::vector<std::string>{"n0.gpu0", "n0.cpu0", "n0.gpu1"}));
  EXPECT_DOUBLE_EQ(near.bw.value(), 31.5);
  EXPECT_NEAR(to_us(near.latency), 2.0, 1e-9);
  const Path far = g.path(0, 5);
  EXPECT_EQ(far.path_class, PathClass::kPcie);
  EXPECT_EQ(route(g, far), (std::vector<std::string>{"n0.gpu0", "n0.cpu0", "n0.cpu1", "n0.gpu5"}));
  EXPECT_DOUBLE_EQ(far.bw.value(), 31.5);
  EXPECT_NEAR(to_us(far.latency), 3.0, 1e-9);
  // The catalog's own P2P figure keeps NCCL's default level: the L40S fixture's 0 -> 2 stays host-staged
  // (PcieP2pOnlyUnderASwitch); a 4090 cluster that leaves transports.pcie_p2p unset has no P2P at all.
  EXPECT_FALSE(catalog().cluster("rtx4090-8x-pcie", "test").pcie_p2p_through_cpus());
}

TEST(HwLinkGraph, CrossNodeThroughRailAlignedNics) {
  // HGX A100, 2 nodes: rank 0 is n0.gpu0, rank 8 is n1.gpu0. gpu0 shares pcie_switch0 with gpu1 and
  // nic0, nic1: the first GPU takes nic0, the second nic1. Route: gpu0 -> pcie_switch0 -> nic0 -> net
  // -> n1.nic0 -> n1.pcie_switch0 -> n1.gpu0. Bandwidth min(31.5, 31.5, 25, 25, 31.5, 31.5) = 25 GB/s
  // (200 Gb/s / 8); latency 1.0 + 1.0 + 2.7 + 2.7 + 1.0 + 1.0 = 9.4 us.
  const LinkGraph g = graph("hgx-a100", 2);
  EXPECT_EQ(g.ranks(), 16);
  const Path p = g.path(0, 8);
  EXPECT_EQ(p.path_class, PathClass::kNetwork);
  EXPECT_EQ(route(g, p), (std::vector<std::string>{"n0.gpu0", "n0.pcie_switch0", "n0.nic0", "net", "n1.nic0",
                                                   "n1.pcie_switch0", "n1.gpu0"}));
  EXPECT_DOUBLE_EQ(p.bw.value(), 25.0);
  EXPECT_NEAR(to_us(p.latency), 9.4, 1e-9);
  EXPECT_EQ(g.device(g.nic(1)).name, "n0.nic1");
  EXPECT_EQ(g.device(g.nic(7)).name, "n0.nic7");
  EXPECT_EQ(g.device(g.nic(9)).name, "n1.nic1");
  // HGX H200: NDR 400 Gb/s / 8 = 50 GB/s.
  EXPECT_DOUBLE_EQ(graph("hgx-h200", 2).path(0, 8).bw.value(), 50.0);
}

TEST(HwLinkGraph, NetworkLinksTakeNcclsMeasuredPortRateWhereLower) {
  // jean-zay-a100: Omni-Path 100 Gb/s ports (12.5 GB/s), through which NCCL moved 5.07 GB/s each way in
  // BigScience's benchmark: the network links take 5.07 and say where it came from. gpu0 shares
  // pcie_switch0 with nic0 only (4 NICs, one per switch).
  const LinkGraph g = graph("jean-zay-a100", 2);
  const Path p = g.path(0, 8);
  EXPECT_EQ(route(g, p), (std::vector<std::string>{"n0.gpu0", "n0.pcie_switch0", "n0.nic0", "net", "n1.nic0",
                                                   "n1.pcie_switch0", "n1.gpu0"}));
  EXPECT_DOUBLE_EQ(p.bw.value(), 5.07);
  const Link& wire = g.link(p.hops.at(2).link);
  EXPECT_EQ(wire.type, LinkType::kNetwork);
  EXPECT_EQ(wire.bw_provenance.tag, SourceTag::kDerived);
  EXPECT_NE(wire.bw_provenance.source.find("NCCL through one port: 5.07 GB/s (below 100 Gb/s / 8"), std::string::npos);
  // Above the line rate it binds nothing: the line rate, priced as before.
  const auto with = [](const std::string& set) {
    return LinkGraph::build(catalog().cluster("jean-zay-a100", "test", parse_overrides({set}, "--set")), 2);
  };
  EXPECT_DOUBLE_EQ(with("network.nccl_port_GBps=40").path(0, 8).bw.value(), 12.5);
  EXPECT_DOUBLE_EQ(with("network.nccl_port_GBps=2").path(0, 8).bw.value(), 2.0);
  EXPECT_THROW((void)with("network.nccl_port_GBps=0"), InputError);
}

TEST(HwLinkGraph, ConsumerNodesShareOneNic) {
  // 8x RTX 4090 nodes with one 100 GbE NIC on cpu0: rank 4 (n0.gpu4, on cpu1) reaches it across the
  // sockets: gpu4 -> cpu1 -> cpu0 -> nic0 -> net -> n1.nic0 -> n1.cpu0 -> n1.gpu0;
  // min(31.5, 64, 31.5, 12.5, 12.5, 31.5, 31.5) = 12.5 GB/s (100 Gb/s / 8).
  const LinkGraph g = graph("rtx4090-8x-roce100", 2);
  const Path p = g.path(4, 8);
  EXPECT_EQ(route(g, p), (std::vector<std::string>{"n0.gpu4", "n0.cpu1", "n0.cpu0", "n0.nic0", "net", "n1.nic0",
                                                   "n1.cpu0", "n1.gpu0"}));
  EXPECT_DOUBLE_EQ(p.bw.value(), 12.5);
  // 25 GbE: 25 / 8 = 3.125 GB/s.
  EXPECT_DOUBLE_EQ(graph("rtx3090-4x-25gbe", 2).path(1, 5).bw.value(), 3.125);
}

TEST(HwLinkGraph, HybridCubeMeshPrefersDirectThenWidest) {
  // DGX-1 V100: 0-3 has two links (50 GB/s); 0 and 5 share no link, so NCCL goes through one GPU
  // (NVB): 0 -> 1 -> 5 (1 and 2 links) or 0 -> 4 -> 5 (2 and 1): both 25 GB/s. 0 and 7: through 3
  // (2, 1 links: 25) or through 4 (2, 2 links: 50): the wider, 50 GB/s.
  const LinkGraph g = graph("dgx1-v100");
  EXPECT_DOUBLE_EQ(g.path(0, 3).bw.value(), 50.0);
  EXPECT_EQ(g.path(0, 3).hops.size(), 1u);
  const Path nvb = g.path(0, 5);
  EXPECT_EQ(nvb.path_class, PathClass::kNvlink);
  EXPECT_EQ(nvb.hops.size(), 2u);
  EXPECT_DOUBLE_EQ(nvb.bw.value(), 25.0);
  const Path wide = g.path(0, 7);
  EXPECT_EQ(route(g, wide), (std::vector<std::string>{"n0.gpu0", "n0.gpu4", "n0.gpu7"}));
  EXPECT_DOUBLE_EQ(wide.bw.value(), 50.0);
}

TEST(HwLinkGraph, RingSlowestHopAndSharedLinks) {
  // Fixture 4x L40S under two switches. Ring 0 -> 1 -> 2 -> 3 -> 0: 0->1 and 2->3 P2P under their
  // switch, 1->2 and 3->0 host-staged through cpu0, each crossing pcie_switch0's uplink once in one
  // direction: no directed link carries two hops, so 31.5 GB/s either way; step latency is the
  // host-staged hops' 4 x 1.0 = 4 us.
  const LinkGraph g = LinkGraph::build(catalog().cluster(testing::kFixtures + "l40s_4x_pcie_switches.json", "test"), 1);
  const std::vector<int> in_order = {0, 1, 2, 3};
  const RingSummary r = g.ring(in_order);
  EXPECT_DOUBLE_EQ(r.slowest_hop_bw.value(), 31.5);
  EXPECT_DOUBLE_EQ(r.shared_bw.value(), 31.5);
  EXPECT_NEAR(to_us(r.step_latency), 4.0, 1e-9);
  EXPECT_EQ(r.hops_by_class[static_cast<std::size_t>(PathClass::kPcie)], 2);
  EXPECT_EQ(r.hops_by_class[static_cast<std::size_t>(PathClass::kHostStaged)], 2);
  // Ring 0 -> 2 -> 1 -> 3 -> 0: every hop crosses the CPU; 0->2 and 1->3 both go up pcie_switch0 ->
  // cpu0 and down cpu0 -> pcie_switch1, so those directed links carry two hops: 31.5 / 2 = 15.75.
  const std::vector<int> crossed = {0, 2, 1, 3};
  const RingSummary x = g.ring(crossed);
  EXPECT_DOUBLE_EQ(x.slowest_hop_bw.value(), 31.5);
  EXPECT_DOUBLE_EQ(x.shared_bw.value(), 15.75);
}

TEST(HwLinkGraph, RingAcrossNodes) {
  // HGX H100, 2 nodes, ring over all 16 ranks: 14 hops on NVSwitch (450 GB/s) and 2 across the network
  // at 50 GB/s (7 -> 8 leaves by n0.nic7 and arrives by n1.nic0; 15 -> 0 by n1.nic7 and n0.nic0), so
  // no directed link carries two hops. Step latency is a network hop's 1 + 1 + 2.7 + 2.7 + 1 + 1 = 9.4 us.
  const LinkGraph g = graph("hgx-h100", 2);
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[static_cast<std::size_t>(i)] = i;
  const RingSummary r = g.ring(all);
  EXPECT_EQ(r.hops_by_class[static_cast<std::size_t>(PathClass::kNvlink)], 14);
  EXPECT_EQ(r.hops_by_class[static_cast<std::size_t>(PathClass::kNetwork)], 2);
  EXPECT_DOUBLE_EQ(r.slowest_hop_bw.value(), 50.0);
  EXPECT_DOUBLE_EQ(r.shared_bw.value(), 50.0);
  EXPECT_NEAR(to_us(r.step_latency), 9.4, 1e-9);
}

TEST(HwLinkGraph, BinaryTree) {
  // HGX A100, 2 nodes, group {0, 8, 1, 9} in heap order: 0 is the root with children 8 (network,
  // 25 GB/s, 9.4 us) and 1 (NVSwitch, 300 GB/s, 1.2 us); 8 has child 9 (n1's NVSwitch, 1.2 us).
  // Depth 2; slowest edge 25 GB/s; root to the deepest leaf 9.4 + 1.2 = 10.6 us.
  const LinkGraph g = graph("hgx-a100", 2);
  const std::vector<int> group = {0, 8, 1, 9};
  const TreeSummary t = g.tree(group);
  ASSERT_EQ(t.down.size(), 3u);
  EXPECT_EQ(t.down[0].dst, 8);
  EXPECT_EQ(t.down[2].src, 8);
  EXPECT_EQ(t.up[2].dst, 8);
  EXPECT_EQ(t.depth, 2);
  EXPECT_DOUBLE_EQ(t.slowest_edge_bw.value(), 25.0);
  EXPECT_DOUBLE_EQ(t.shared_bw.value(), 25.0);
  EXPECT_NEAR(to_us(t.root_to_leaf_latency), 10.6, 1e-9);
}

TEST(HwLinkGraph, HopsNameDirectedLinksForContention) {
  // A path and its reverse use the same links in opposite directions, hence different directed indices.
  const LinkGraph g = graph("rtx4090-8x-pcie");
  const Path there = g.path(0, 1);
  const Path back = g.path(1, 0);
  ASSERT_EQ(there.hops.size(), back.hops.size());
  EXPECT_EQ(there.hops[0].link, back.hops[1].link);
  EXPECT_NE(directed_index(there.hops[0]), directed_index(back.hops[1]));
  EXPECT_LT(directed_index(there.hops[0]), 2 * g.links().size());
}

TEST(HwLinkGraph, RejectsBadRanksGroupsAndNodeCounts) {
  const LinkGraph g = graph("h200x2");
  EXPECT_THROW((void)g.path(0, 0), InputError);
  EXPECT_THROW((void)g.path(0, 2), InputError);
  EXPECT_THROW((void)g.path(-1, 0), InputError);
  const std::vector<int> one = {0};
  const std::vector<int> twice = {0, 0};
  EXPECT_THROW((void)g.ring(one), InputError);
  EXPECT_THROW((void)g.ring(twice), InputError);
  EXPECT_THROW((void)g.tree(one), InputError);
  EXPECT_THROW((void)g.nic(0), InputError);  // no network
  EXPECT_THROW((void)graph("h200x2", 0), InputError);
  try {
    (void)graph("h200x2", 2);
    FAIL() << "two nodes of a cluster without a network";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--nodes: 2 nodes of h200x2, which has no network section"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(graph("h200x1").ranks(), 1);
}

}  // namespace
}  // namespace commscale::hw

#pragma once

// What the link graph says about a communication group, for the collective cost model: the bus
// bandwidth its ring (or tree) can sustain inside each node and between nodes while its sibling
// groups run at once, and the path classes and latencies of its steps.
//
// Achievable bandwidth per link (achievable_link_bw) is NCCL's own figure, not the line rate:
//   NVLink: links x NCCL's per-link bandwidth for the GPU's compute capability (NCCL's topo.h: SM80
//           20.0, SM86 12.0, SM90 20.6, SM100 40.1 GB/s); other architectures 0.8 x the catalog's
//           rate (D: SM80's 20.0 over A100's 25 GB/s per link);
//   PCIe:   NCCL's width x speed / 80 (12, 24, 48 GB/s for x16 gen3, 4, 5); a link whose file gives its
//           own bandwidth keeps 0.76 of it (D: 24 / 31.5). PCIe P2P through CPU root complexes runs at
//           these figures too, and no efficiency of its own is fitted: against the published P2P-driver
//           all-reduces (shared/VALIDATION.md), the model gives 23.3 GB/s busbw at 32 MB on 6 x RTX 4090
//           (measured 24.5: -5%), 44.8 on 8 x RTX 5090 (45.7: -2%; 47.2 at 128 MB against 43.9: +7%),
//           and 20.6 us at 8 bytes there (NCCL's PCI step latencies; measured 24.5 us: -16%);
//   CPU-CPU, socket and network links: their figure as given (NCCL uses the NIC's Mb/s / 8000).
// A host-staged path (NCCL's SHM transport) moves data at kHostStagedEfficiency of its narrowest
// link, a measured constant (below; the model's other measured terms are in comm_measured.hpp).
//
// NCCL picks its algorithm and protocol by its own estimate, which knows neither that efficiency nor
// the socket loop's measured rate, nor the sibling groups: `nccl_bw` is the bus bandwidth as NCCL's
// topology would give it (the group alone, NCCL's per-link figures, socket loops not seen).
//
// A group's ring, as NCCL runs it over several nodes: inside each node a ring over the group's local
// members (each hop carries the whole ring traffic); between consecutive nodes, one "rail" per local
// member, member r of a node to member r of the next, each carrying 1/R of the traffic (NCCL gives
// each channel its own NIC). Every path of every sibling group loads the directed links it crosses
// (1 per ring hop, 1/R per rail); a group's bandwidth is the smallest, over its paths and their links,
// of achievable bandwidth / load (times the host-staged efficiency on host-staged paths). Siblings are
// the groups that run the same collectives at the same time: all tensor-parallel groups of a plan, say,
// so that 8 TP rings behind one PCIe host bridge share it.

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "hw/cluster_spec.hpp"
#include "hw/link_graph.hpp"

namespace commscale::predict {

// NCCL_P2P_DISABLE=1 all_reduce on the project's 2 x H200 (nccl-tests, 4 GiB): 27.0 GB/s busbw, over
// NCCL's 48 GB/s for the PCIe gen5 x16 links of the path: 27.0 / 48 = 0.5625. Set from that measurement;
// the sweeps of 2026-12-01 (results/collective-latency/) found 27.4 (bench) and 28.3 (nccl-tests) at
// 1 GiB, and the published 8 x RTX 5090 figure (28 GB/s, gen5) is an independent check.
inline constexpr double kHostStagedEfficiency = 27.0 / 48.0;

inline constexpr double kUnlimitedGBps = std::numeric_limits<double>::infinity();

// Achievable GB/s per direction of every link of the graph, by link id.
[[nodiscard]] std::vector<double> achievable_link_bw(const hw::LinkGraph& graph, const hw::ClusterSpec& cluster,
                                                     const hw::ReferenceData& reference);

struct GroupLinks {
  int ranks = 1;
  int nodes = 1;                                       // nodes the group spans
  int local = 1;                                       // the most members on one node
  hw::PathClass intra_class = hw::PathClass::kNvlink;  // the slowest class among the intra-node hops
  bool intra_nvlink = true;                            // every intra-node hop is NVLink
  GBps intra_bw{kUnlimitedGBps};                       // ring capacity inside nodes (unlimited with 1 local member)
  GBps inter_bw{kUnlimitedGBps};                       // ring capacity between nodes (unlimited on 1 node)
  GBps alone_bw{kUnlimitedGBps};                       // bus bandwidth with no sibling running
  GBps nccl_bw{kUnlimitedGBps};                        // NCCL's own view of the bus bandwidth (above)
  int p2p_channels = 2;                                // NCCL's channels per peer (nccl_tables.hpp), fewest
  Seconds intra_latency;                               // the link graph's largest intra-node hop latency
  Seconds inter_latency;

  [[nodiscard]] GBps bus_bw() const noexcept { return intra_bw < inter_bw ? intra_bw : inter_bw; }
  // The class that limits the bandwidth: network when the rails between nodes are narrower.
  [[nodiscard]] hw::PathClass bottleneck_class() const noexcept;
  friend bool operator==(const GroupLinks&, const GroupLinks&) = default;
};

struct FlowLinks {
  hw::PathClass path_class = hw::PathClass::kNvlink;
  GBps bw{kUnlimitedGBps};  // per direction, with the load of the flows running at once
  Seconds latency;          // the link graph's latency of the path
  int p2p_channels = 2;     // NCCL's channels per peer for this pair (nccl_tables.hpp)
  friend bool operator==(const FlowLinks&, const FlowLinks&) = default;
};

class LinkAnalyzer {
 public:
  LinkAnalyzer(const hw::LinkGraph& graph, std::vector<double> achievable_bw);

  // One GroupLinks per group; the groups run at once. A group is a list of distinct world ranks.
  [[nodiscard]] std::vector<GroupLinks> groups(const std::vector<std::vector<int>>& siblings);
  // One FlowLinks per (src, dst) flow; the flows run at once.
  [[nodiscard]] std::vector<FlowLinks> flows(const std::vector<std::pair<int, int>>& flows);
  // All-to-all in each group (every ordered pair of members), groups at once: the slowest flow of each.
  [[nodiscard]] std::vector<FlowLinks> all_to_all(const std::vector<std::vector<int>>& siblings);

  [[nodiscard]] const hw::LinkGraph& graph() const noexcept { return graph_; }
  [[nodiscard]] double achievable(hw::LinkId link) const { return achievable_.at(link); }

 private:
  struct Load {
    const hw::Path* path;
    double load;
    bool inter;
  };
  [[nodiscard]] const hw::Path& path(int src, int dst);
  [[nodiscard]] std::vector<Load> group_paths(const std::vector<int>& members);
  void add_load(const std::vector<Load>& paths, std::vector<double>& loads, std::vector<std::size_t>& touched) const;
  struct Rates {
    double intra;
    double inter;
  };
  // The narrowest share of the paths' links inside nodes and between them; in NCCL's view (see above)
  // without the host-staged efficiency and the socket loops.
  [[nodiscard]] Rates rates(const std::vector<Load>& paths, const std::vector<double>& loads, bool nccl_view) const;
  [[nodiscard]] double path_rate(const hw::Path& path, const std::vector<double>& loads, bool nccl_view) const;
  [[nodiscard]] int p2p_channels(const hw::Path& path) const;
  [[nodiscard]] GroupLinks summarize(const std::vector<int>& members, const std::vector<Load>& paths,
                                     const std::vector<double>& loads) const;

  const hw::LinkGraph& graph_;
  std::vector<double> achievable_;
  std::unordered_map<std::uint64_t, hw::Path> paths_;
  std::vector<double> loads_;  // by directed link index, all zero between calls
  std::vector<double> own_;    // likewise, for one group alone
};

}  // namespace commscale::predict

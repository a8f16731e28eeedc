#pragma once

// The link graph of a cluster: the predictor's view of the hardware.
//
// Devices (GPUs, NVSwitch fabrics, PCIe switches, CPU sockets, NICs, the network switch) are joined by
// full-duplex links, each with a bandwidth per direction and a latency per traversal, taken from the
// physical description in the cluster file (line rates with sources; never measurements, except the
// socket loop, which is software and has no line rate). `build(cluster, N)` expands the file's one node
// into N nodes joined by its network. Rank r is GPU r % G of node r / G (G GPUs per node).
//
// path(a, b) routes as NCCL would choose its transport between two ranks:
//   same node, P2P allowed (transports.p2p):
//     1. NVLink — direct, through the nvswitch fabric, or through one intermediate GPU (NCCL's NVB);
//        routes without an intermediate GPU first, then the widest, then the shortest.   class nvlink
//     2. PCIe P2P — when the GPUs allow it (catalog p2p_over_pcie or transports.pcie_p2p). With the
//        catalog's figure the PCIe route must not cross a CPU (NCCL's default P2P level, PXB); where the
//        cluster sets transports.pcie_p2p true itself (a P2P-enabled driver on GPUs under the CPUs' root
//        ports, as in the published runs of shared/VALIDATION.md) it may pass through the CPUs' root
//        complexes and the links between sockets (NCCL_P2P_LEVEL=SYS).                   class pcie
//   same node otherwise:
//     3. Host-staged (transports.shm) — up from the source GPU to the CPU local to the destination GPU
//        (across CPU sockets if need be), then down to the destination: two PCIe crossings and the host,
//        as NCCL diverts non-P2P traffic through the destination's CPU.                   class host_staged
//     4. Socket — up to the source GPU's CPU, its socket loop link, then to the destination. class socket
//   different nodes:
//     5. Source GPU -> its NIC (PCIe) -> network switch -> the destination's NIC -> destination GPU.
//        A GPU's NIC is the nearest by PCIe hops, rail-aligned: the k-th GPU among those sharing the
//        same nearest NICs takes the (k mod n)-th of them.                                  class network
//
// A path lists its hops (link id and direction), so that the predictor can count flows per directed
// link for contention; `bw` is the narrowest hop alone and `latency` the sum of the hops' latencies.
// Ring and tree summaries compute both the narrowest hop and the bandwidth left when the hops that run
// at once share directed links.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "hw/cluster_spec.hpp"
#include "hw/figure.hpp"
#include "hw/kinds.hpp"

namespace commscale::hw {

using DeviceId = std::uint32_t;
using LinkId = std::uint32_t;

struct Device {
  DeviceKind kind = DeviceKind::kGpu;
  int node = 0;      // -1 for the network switch, which all nodes share
  int index = 0;     // among the node's devices of this kind
  std::string name;  // "n0.gpu3", "n1.pcie_switch0", "net"
};

struct Link {
  LinkType type = LinkType::kPcie;
  DeviceId a = 0;
  DeviceId b = 0;   // equal to `a` only for a socket loop (full duplex too: see path())
  GBps bw;          // per direction
  Seconds latency;  // one traversal
  int lanes = 0;    // NVLink links bundled, or PCIe width; 0 otherwise
  Provenance bw_provenance;
};

enum class Direction : std::uint8_t { kAtoB, kBtoA };

struct Hop {
  LinkId link = 0;
  Direction direction = Direction::kAtoB;
  bool operator==(const Hop&) const = default;
};

// One index per (link, direction), 0 .. 2 * links().size() - 1: the unit contention is counted in.
[[nodiscard]] constexpr std::size_t directed_index(Hop h) noexcept {
  return 2 * static_cast<std::size_t>(h.link) + (h.direction == Direction::kBtoA ? 1 : 0);
}

struct Path {
  int src = 0;  // ranks
  int dst = 0;
  PathClass path_class = PathClass::kNvlink;
  std::vector<Hop> hops;
  GBps bw;          // the narrowest hop's bandwidth per direction
  Seconds latency;  // the sum of the hops' latencies
  [[nodiscard]] bool p2p() const noexcept { return is_p2p(path_class); }
};

// A ring over a group: hop i goes from group[i] to group[(i + 1) % n]; in a ring step all hops run at once.
struct RingSummary {
  std::vector<Path> hops;
  std::size_t slowest_hop = 0;  // index into hops
  GBps slowest_hop_bw;          // the narrowest hop, each hop alone
  GBps shared_bw;               // min over directed links of bw / (hops of the ring crossing it that way)
  Seconds step_latency;         // the largest hop latency: one ring step waits for its slowest hop
  std::array<int, kPathClassCount> hops_by_class{};
};

// A binary tree over a group in heap order: group[0] is the root, the parent of group[i] is
// group[(i - 1) / 2]. NCCL builds a chain inside a node and a double binary tree between nodes; the
// predictor can compose those from path(); this is the generic shape.
struct TreeSummary {
  std::vector<Path> down;        // down[i - 1]: parent of group[i] -> group[i], for i = 1 .. n - 1
  std::vector<Path> up;          // up[i - 1]: group[i] -> its parent
  GBps slowest_edge_bw;          // the narrowest edge, up or down, each alone
  GBps shared_bw;                // as RingSummary::shared_bw, all down edges at once, and all up edges at once
  int depth = 0;                 // edges from the root to the deepest leaf
  Seconds root_to_leaf_latency;  // the largest sum of down-path latencies from the root to a leaf
};

inline constexpr int kMaxNodes = 65536;

class LinkGraph {
 public:
  // Expands the cluster's node into `nodes` nodes. Throws InputError("--nodes") for nodes outside
  // 1 .. kMaxNodes, or above 1 when the cluster has no network.
  [[nodiscard]] static LinkGraph build(const ClusterSpec& cluster, int nodes);

  [[nodiscard]] int nodes() const noexcept { return nodes_; }
  [[nodiscard]] int gpus_per_node() const noexcept { return gpus_per_node_; }
  [[nodiscard]] int ranks() const noexcept { return nodes_ * gpus_per_node_; }
  [[nodiscard]] const std::vector<Device>& devices() const noexcept { return devices_; }
  [[nodiscard]] const std::vector<Link>& links() const noexcept { return links_; }
  [[nodiscard]] const Device& device(DeviceId id) const { return devices_.at(id); }
  [[nodiscard]] const Link& link(LinkId id) const { return links_.at(id); }
  [[nodiscard]] const std::vector<LinkId>& links_of(DeviceId id) const { return links_of_.at(id); }
  [[nodiscard]] DeviceId gpu_device(int rank) const;
  [[nodiscard]] DeviceId local_cpu(int rank) const;  // the CPU nearest the rank's GPU over PCIe
  [[nodiscard]] DeviceId nic(int rank) const;        // the rank's NIC; throws without a network
  [[nodiscard]] int node_of(int rank) const noexcept { return rank / gpus_per_node_; }
  [[nodiscard]] bool has_network() const noexcept { return network_switch_ >= 0; }

  // The route between two different ranks (see the top of this file). Throws InputError("rank") for a
  // rank out of range or src == dst, and InputError naming the cluster file when no transport connects them.
  [[nodiscard]] Path path(int src, int dst) const;
  // A ring over at least 2 distinct ranks, in the order given.
  [[nodiscard]] RingSummary ring(std::span<const int> group) const;
  // A heap-ordered binary tree over at least 2 distinct ranks.
  [[nodiscard]] TreeSummary tree(std::span<const int> group) const;

  // "n0.gpu0 -> n0.nvswitch0 -> n0.gpu1" for printing.
  [[nodiscard]] std::string describe(const Path& path) const;

 private:
  friend struct LinkGraphBuilder;

  [[nodiscard]] Path same_node_path(int src, int dst) const;
  [[nodiscard]] Path network_path(int src, int dst) const;
  void check_group(std::span<const int> group) const;

  std::string file_;  // the cluster file, for messages
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<std::vector<LinkId>> links_of_;  // by device
  std::vector<DeviceId> gpu_of_rank_;
  std::vector<DeviceId> cpu_of_rank_;
  std::vector<DeviceId> nic_of_rank_;  // empty without a network
  int network_switch_ = -1;            // device id of the network switch, or -1
  int nodes_ = 1;
  int gpus_per_node_ = 1;
  bool p2p_ = true;
  bool shm_ = true;
  bool pcie_p2p_ = false;
  bool pcie_p2p_through_cpus_ = false;
};

}  // namespace commscale::hw

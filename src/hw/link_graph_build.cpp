// Expanding a cluster file's node into N nodes plus the network, and choosing each rank's CPU and NIC.

#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/link_graph.hpp"
#include "hw/routing.hpp"

namespace commscale::hw {

struct LinkGraphBuilder {
  const ClusterSpec& cluster;
  LinkGraph& g;
  std::vector<std::array<DeviceId, kDeviceKindCount>> first_of_kind;  // by node

  DeviceId id(int node, DeviceRef d) const {
    return first_of_kind[node][static_cast<std::size_t>(d.kind)] + static_cast<DeviceId>(d.index);
  }

  DeviceId add_device(DeviceKind kind, int node, int index, std::string name) {
    g.devices_.push_back({kind, node, index, std::move(name)});
    g.links_of_.emplace_back();
    return static_cast<DeviceId>(g.devices_.size() - 1);
  }

  void add_link(Link link) {
    const auto id = static_cast<LinkId>(g.links_.size());
    g.links_of_[link.a].push_back(id);
    if (link.b != link.a) g.links_of_[link.b].push_back(id);
    g.links_.push_back(std::move(link));
  }

  void add_node(int node) {
    std::array<DeviceId, kDeviceKindCount> first{};
    for (std::size_t k = 0; k < kDeviceKindCount; ++k) {
      const auto kind = static_cast<DeviceKind>(k);
      first[k] = static_cast<DeviceId>(g.devices_.size());
      for (int i = 0; i < cluster.node.device_count[k]; ++i) {
        add_device(kind, node, i, fmt::format("n{}.{}{}", node, name(kind), i));
      }
    }
    first_of_kind.push_back(first);
    for (const LinkSpec& l : cluster.node.links) {
      add_link({l.type, id(node, l.a), id(node, l.b), *l.bw.value, *l.latency.value, l.lanes, l.bw.provenance});
    }
  }

  void add_network() {
    const NetworkSpec& net = *cluster.network;
    const DeviceId sw = add_device(DeviceKind::kNetSwitch, -1, 0, "net");
    g.network_switch_ = static_cast<int>(sw);
    const bool measured = net.nic_bw() < net.line_bw();  // NCCL's measured rate binds
    const Provenance p =
        measured
            ? Provenance{net.nccl_port_GBps->provenance.tag,
                         fmt::format("NCCL through one port: {} GB/s (below {} Gb/s / 8; {})",
                                     *net.nccl_port_GBps->value, *net.nic_rate_Gbps.value,
                                     net.nccl_port_GBps->provenance.source),
                         {}}
            : Provenance{SourceTag::kDerived,
                         fmt::format("{} Gb/s / 8 ({}: {})", *net.nic_rate_Gbps.value,
                                     tag_letter(net.nic_rate_Gbps.provenance.tag), net.nic_rate_Gbps.provenance.source),
                         {}};
    for (int node = 0; node < g.nodes_; ++node) {
      for (int i = 0; i < cluster.node.count(DeviceKind::kNic); ++i) {
        add_link({LinkType::kNetwork, id(node, {DeviceKind::kNic, i}), sw, net.nic_bw(), *net.latency.value, 0, p});
      }
    }
  }

  // The CPU nearest each GPU over PCIe (lowest index on a tie). Nodes are identical, so node 0 decides.
  void choose_cpus() {
    RouteRule rule;
    (void)rule.use(LinkType::kPcie).pass(DeviceKind::kPcieSwitch);
    std::vector<int> local_cpu;
    for (int local = 0; local < g.gpus_per_node_; ++local) {
      const std::vector<DeviceId> cpus = nearest(g, g.gpu_of_rank_[local], DeviceKind::kCpu, rule);
      local_cpu.push_back(g.devices_.at(cpus.at(0)).index);  // validate_cluster guarantees one
    }
    for (int rank = 0; rank < g.ranks(); ++rank) {
      g.cpu_of_rank_.push_back(id(g.node_of(rank), {DeviceKind::kCpu, local_cpu[rank % g.gpus_per_node_]}));
    }
  }

  // The NIC nearest each GPU over PCIe, rail-aligned: the k-th GPU among those with the same nearest
  // NICs takes the (k mod n)-th of them, so that two GPUs beside two NICs use one each, as NCCL does.
  void choose_nics() {
    RouteRule rule;
    (void)rule.use(LinkType::kPcie).use(LinkType::kCpu).pass(DeviceKind::kPcieSwitch).pass(DeviceKind::kCpu);
    std::map<std::vector<DeviceId>, int> sharing;
    std::vector<int> local_nic;
    for (int local = 0; local < g.gpus_per_node_; ++local) {
      const std::vector<DeviceId> nics = nearest(g, g.gpu_of_rank_[local], DeviceKind::kNic, rule);
      const int k = sharing[nics]++;
      local_nic.push_back(g.devices_.at(nics.at(static_cast<std::size_t>(k) % nics.size())).index);
    }
    for (int rank = 0; rank < g.ranks(); ++rank) {
      g.nic_of_rank_.push_back(id(g.node_of(rank), {DeviceKind::kNic, local_nic[rank % g.gpus_per_node_]}));
    }
  }

  void run(int nodes) {
    g.file_ = cluster.file;
    g.nodes_ = nodes;
    g.gpus_per_node_ = cluster.gpus_per_node();
    g.p2p_ = cluster.transports.p2p;
    g.shm_ = cluster.transports.shm;
    g.pcie_p2p_ = cluster.pcie_p2p_allowed();
    g.pcie_p2p_through_cpus_ = cluster.pcie_p2p_through_cpus();
    for (int node = 0; node < nodes; ++node) add_node(node);
    for (int rank = 0; rank < g.ranks(); ++rank) {
      g.gpu_of_rank_.push_back(id(rank / g.gpus_per_node_, {DeviceKind::kGpu, rank % g.gpus_per_node_}));
    }
    choose_cpus();
    if (cluster.network) {
      add_network();
      choose_nics();
    }
  }
};

LinkGraph LinkGraph::build(const ClusterSpec& cluster, int nodes) {
  // The bound keeps a typo from allocating millions of nodes; no cluster studied here comes close.
  if (nodes < 1 || nodes > kMaxNodes) {
    throw InputError("--nodes", fmt::format("{} nodes", nodes), fmt::format("1 to {}", kMaxNodes));
  }
  if (nodes > 1 && !cluster.network) {
    throw InputError(
        "--nodes", fmt::format("{} nodes of {}, which has no network section ({})", nodes, cluster.name, cluster.file),
        "1, or a cluster that describes its network");
  }
  LinkGraph g;
  LinkGraphBuilder{cluster, g, {}}.run(nodes);
  return g;
}

DeviceId LinkGraph::gpu_device(int rank) const { return gpu_of_rank_.at(static_cast<std::size_t>(rank)); }
DeviceId LinkGraph::local_cpu(int rank) const { return cpu_of_rank_.at(static_cast<std::size_t>(rank)); }

DeviceId LinkGraph::nic(int rank) const {
  if (nic_of_rank_.empty())
    throw InputError(file_, "has no network, so ranks have no NIC", "a cluster with a network section");
  return nic_of_rank_.at(static_cast<std::size_t>(rank));
}

}  // namespace commscale::hw

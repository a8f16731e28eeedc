// Paths between ranks as NCCL would route them (the rules are at the top of link_graph.hpp).

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/link_graph.hpp"
#include "hw/routing.hpp"

namespace commscale::hw {
namespace {

RouteRule nvlink_rule() {
  RouteRule r;
  (void)r.use(LinkType::kNvlink).pass(DeviceKind::kNvswitch).pass(DeviceKind::kGpu);
  r.max_gpu_intermediates = 1;  // NCCL's NVB: through one NVLink-connected GPU
  r.max_hops = 4;
  return r;
}

// PCIe P2P under PCIe switches: NCCL's default P2P level (PXB) excludes routes through a CPU. With
// `through_cpus` (NCCL_P2P_LEVEL=SYS) also through the CPUs' root complexes and between sockets.
RouteRule pcie_p2p_rule(bool through_cpus) {
  RouteRule r;
  (void)r.use(LinkType::kPcie).pass(DeviceKind::kPcieSwitch);
  if (through_cpus) (void)r.use(LinkType::kCpu).pass(DeviceKind::kCpu);
  return r;
}

// Between a GPU or NIC and any CPU, or each other through CPUs: PCIe plus the links between sockets.
RouteRule host_rule() {
  RouteRule r;
  (void)r.use(LinkType::kPcie).use(LinkType::kCpu).pass(DeviceKind::kPcieSwitch).pass(DeviceKind::kCpu);
  return r;
}

// validate_cluster guarantees PCIe routes from every GPU and NIC to a CPU; this guards the rest.
void append(std::vector<Hop>& hops, const std::optional<std::vector<Hop>>& more, const std::string& file) {
  if (!more)
    throw InputError(file, "has devices with no route between them", "every GPU and NIC under a connected cpu");
  hops.insert(hops.end(), more->begin(), more->end());
}

}  // namespace

Path LinkGraph::path(int src, int dst) const {
  for (const int rank : {src, dst}) {
    if (rank < 0 || rank >= ranks()) {
      throw InputError("rank", fmt::format("{} is not a rank of {} ranks", rank, ranks()),
                       fmt::format("0 to {}", ranks() - 1));
    }
  }
  if (src == dst) throw InputError("rank", fmt::format("a path from rank {} to itself", src), "two different ranks");
  Path p = node_of(src) == node_of(dst) ? same_node_path(src, dst) : network_path(src, dst);
  p.src = src;
  p.dst = dst;
  double bw = 1e300;
  for (const Hop& hop : p.hops) {
    bw = std::min(bw, link(hop.link).bw.value());
    p.latency += link(hop.link).latency;
  }
  p.bw = GBps(bw);
  return p;
}

Path LinkGraph::same_node_path(int src, int dst) const {
  const DeviceId s = gpu_device(src);
  const DeviceId d = gpu_device(dst);
  Path p;
  if (p2p_) {
    if (auto route = find_route(*this, s, d, nvlink_rule())) {
      p.path_class = PathClass::kNvlink;
      p.hops = std::move(*route);
      return p;
    }
    if (pcie_p2p_) {
      if (auto route = find_route(*this, s, d, pcie_p2p_rule(pcie_p2p_through_cpus_))) {
        p.path_class = PathClass::kPcie;
        p.hops = std::move(*route);
        return p;
      }
    }
  }
  if (shm_) {
    // NCCL stages through the host memory of the destination GPU's CPU.
    p.path_class = PathClass::kHostStaged;
    append(p.hops, find_route(*this, s, local_cpu(dst), host_rule()), file_);
    append(p.hops, find_route(*this, local_cpu(dst), d, host_rule()), file_);
    return p;
  }
  const DeviceId cpu = local_cpu(src);
  for (const LinkId id : links_of(cpu)) {
    if (link(id).type != LinkType::kSocket) continue;
    p.path_class = PathClass::kSocket;
    append(p.hops, find_route(*this, s, cpu, host_rule()), file_);
    // A loop has no ends to tell directions by; like other links it is full duplex, so flows towards a
    // higher-numbered GPU count as one direction and the others as the other. Two opposite flows then do
    // not share it, as on the measured machine, where both ranks sent at once.
    p.hops.push_back({id, d > s ? Direction::kAtoB : Direction::kBtoA});
    append(p.hops, find_route(*this, cpu, d, host_rule()), file_);
    return p;
  }
  throw InputError(file_,
                   fmt::format("no transport joins ranks {} and {}: P2P and SHM are off and {} has no socket link", src,
                               dst, device(cpu).name),
                   "transports.shm true, or a socket link on each cpu");
}

Path LinkGraph::network_path(int src, int dst) const {
  Path p;
  p.path_class = PathClass::kNetwork;
  const auto to_switch = [this](DeviceId nic_id) {
    for (const LinkId id : links_of(nic_id)) {
      if (link(id).type == LinkType::kNetwork) return id;
    }
    return LinkId{0};  // unreachable: the builder gives every NIC its network link
  };
  append(p.hops, find_route(*this, gpu_device(src), nic(src), host_rule()), file_);
  p.hops.push_back({to_switch(nic(src)), Direction::kAtoB});
  p.hops.push_back({to_switch(nic(dst)), Direction::kBtoA});
  append(p.hops, find_route(*this, nic(dst), gpu_device(dst), host_rule()), file_);
  return p;
}

std::string LinkGraph::describe(const Path& p) const {
  if (p.hops.empty()) return {};
  std::string out = device(hop_start(*this, p.hops.front())).name;
  for (const Hop& hop : p.hops) {
    const Link& l = link(hop.link);
    out += l.a == l.b ? fmt::format(" -({})-> {}", name(l.type), device(l.a).name)
                      : " -> " + device(hop_end(*this, hop)).name;
  }
  return out;
}

}  // namespace commscale::hw

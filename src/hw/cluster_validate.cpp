// Checks of a whole cluster that no single key shows: NVLink lanes against the GPU's links, devices
// left unconnected, GPUs and NICs with no PCIe way to a CPU, NICs without a network.

#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/cluster_spec.hpp"

namespace commscale::hw {
namespace {

std::string where(const ClusterSpec& c, std::string_view key) { return fmt::format("{}: {}", c.file, key); }

void check_nvlink_lanes(const ClusterSpec& c) {
  const std::optional<int>& available = c.gpu.nvlink.links.value;
  if (!available) return;
  std::map<int, int> lanes;
  for (const LinkSpec& l : c.node.links) {
    if (l.type != LinkType::kNvlink) continue;
    for (const DeviceRef& end : {l.a, l.b}) {
      if (end.kind == DeviceKind::kGpu) lanes[end.index] += l.lanes;
    }
  }
  for (const auto& [gpu, used] : lanes) {
    if (used > *available) {
      throw InputError(
          where(c, "node.links"),
          fmt::format("gpu{} has {} NVLink lanes, but {} has {} NVLink links", gpu, used, c.gpu.name, *available),
          fmt::format("at most {} lanes per GPU", *available));
    }
  }
}

void check_every_device_linked(const ClusterSpec& c) {
  for (std::size_t k = 0; k < kDeviceKindCount; ++k) {
    for (int i = 0; i < c.node.device_count[k]; ++i) {
      const DeviceRef d{static_cast<DeviceKind>(k), i};
      bool linked = false;
      for (const LinkSpec& l : c.node.links) linked = linked || l.a == d || l.b == d;
      if (!linked)
        throw InputError(where(c, "node.links"), fmt::format("{} has no link", device_name(d)),
                         "every device of node.devices in a link");
    }
  }
}

// Whether `from` reaches a CPU over PCIe links through PCIe switches only.
bool reaches_cpu(const ClusterSpec& c, DeviceRef from) {
  std::deque<DeviceRef> queue = {from};
  std::vector<DeviceRef> seen = {from};
  while (!queue.empty()) {
    const DeviceRef d = queue.front();
    queue.pop_front();
    if (d.kind == DeviceKind::kCpu) return true;
    if (d != from && d.kind != DeviceKind::kPcieSwitch) continue;
    for (const LinkSpec& l : c.node.links) {
      if (l.type != LinkType::kPcie || (l.a != d && l.b != d)) continue;
      const DeviceRef next = l.a == d ? l.b : l.a;
      if (std::find(seen.begin(), seen.end(), next) != seen.end()) continue;
      seen.push_back(next);
      queue.push_back(next);
    }
  }
  return false;
}

void check_pcie_roots(const ClusterSpec& c) {
  for (const DeviceKind kind : {DeviceKind::kGpu, DeviceKind::kNic}) {
    for (int i = 0; i < c.node.count(kind); ++i) {
      if (!reaches_cpu(c, {kind, i})) {
        throw InputError(where(c, "node.links"), fmt::format("{}{} has no PCIe path to a cpu", name(kind), i),
                         "every GPU and NIC under a cpu, directly or through pcie_switches");
      }
    }
  }
}

void check_network(const ClusterSpec& c) {
  const int nics = c.node.count(DeviceKind::kNic);
  if (nics > 0 && !c.network) {
    throw InputError(where(c, "network"), fmt::format("is missing, but the node has {} nic", nics),
                     "a network section for the NICs");
  }
  if (nics == 0 && c.network) {
    throw InputError(where(c, "node.devices.nic"), "is missing or 0, but the cluster has a network",
                     "at least one nic");
  }
  if (c.node.nvswitch_chips && c.node.count(DeviceKind::kNvswitch) == 0) {
    throw InputError(where(c, "node.nvswitch_chips"), "is given, but node.devices has no nvswitch",
                     "an nvswitch device");
  }
}

}  // namespace

void validate_cluster(const ClusterSpec& cluster) {
  check_every_device_linked(cluster);
  check_nvlink_lanes(cluster);
  check_pcie_roots(cluster);
  check_network(cluster);
}

}  // namespace commscale::hw

#pragma once

// Route search inside a link graph, restricted by link type and by the kinds of device a route may
// pass through. Graphs inside a node are small (tens of devices), so an exhaustive search over simple
// routes of bounded length is cheap and lets the preference order be exact.

#include <array>
#include <optional>
#include <vector>

#include "hw/link_graph.hpp"

namespace commscale::hw {

struct RouteRule {
  std::array<bool, kLinkTypeCount> link_types{};  // link types a route may use
  std::array<bool, kDeviceKindCount> through{};   // device kinds a route may pass through
  int max_gpu_intermediates = 0;                  // GPUs passed through (NCCL's NVB allows one)
  int max_hops = 8;

  [[nodiscard]] RouteRule& use(LinkType t) {
    link_types[static_cast<std::size_t>(t)] = true;
    return *this;
  }
  [[nodiscard]] RouteRule& pass(DeviceKind k) {
    through[static_cast<std::size_t>(k)] = true;
    return *this;
  }
};

// The best route from `from` to `to` under `rule`: fewest intermediate GPUs, then the widest
// bottleneck, then the fewest hops, then the first in link order. Loops (socket links) are never used.
[[nodiscard]] std::optional<std::vector<Hop>> find_route(const LinkGraph& graph, DeviceId from, DeviceId to,
                                                         const RouteRule& rule);

// The devices of `kind` fewest hops from `from` under `rule`, in id order (empty if none is reachable).
[[nodiscard]] std::vector<DeviceId> nearest(const LinkGraph& graph, DeviceId from, DeviceKind kind,
                                            const RouteRule& rule);

// The device a hop arrives at.
[[nodiscard]] DeviceId hop_end(const LinkGraph& graph, Hop hop);
[[nodiscard]] DeviceId hop_start(const LinkGraph& graph, Hop hop);

}  // namespace commscale::hw

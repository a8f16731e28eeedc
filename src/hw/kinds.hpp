#pragma once

// The vocabulary of the link graph: kinds of device, kinds of link, and the classes of path that
// NCCL's cost model distinguishes. Names are the ones used in topology files and printed output.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace commscale::hw {

enum class DeviceKind : std::uint8_t {
  kGpu,
  kNvswitch,    // one NVSwitch fabric: all the NVSwitch chips of a baseboard, which NCCL stripes over
  kPcieSwitch,  // a PCIe switch (PLX/Broadcom); peer traffic under it does not touch the CPU
  kCpu,         // a CPU socket: its PCIe root complex, host bridge and host memory
  kNic,         // a network adapter
  kNetSwitch,   // the network between nodes (added by the link graph, never written in a node)
};
inline constexpr std::size_t kDeviceKindCount = 6;

enum class LinkType : std::uint8_t {
  kNvlink,   // NVLink, direct (bridge) or to an NVSwitch; `lanes` links bundled
  kPcie,     // a PCIe link of some generation and width
  kCpu,      // between CPU sockets (UPI, xGMI, ...)
  kSocket,   // host software path of NCCL's socket transport: a loop on one CPU through the kernel's TCP stack
  kNetwork,  // a NIC port to the network
};
inline constexpr std::size_t kLinkTypeCount = 5;

// How two ranks exchange data, as NCCL would choose it (see link_graph.hpp).
enum class PathClass : std::uint8_t {
  kNvlink,      // P2P over NVLink, direct, through NVSwitch or through one intermediate GPU
  kPcie,        // P2P over PCIe switches, not crossing a CPU
  kHostStaged,  // through host memory: up one PCIe path into the CPU, down another (NCCL's SHM transport)
  kSocket,      // through host memory and the socket transport (NCCL with P2P and SHM disabled)
  kNetwork,     // between nodes, through NICs and the network
};
inline constexpr std::size_t kPathClassCount = 5;

[[nodiscard]] std::string_view name(DeviceKind kind) noexcept;  // gpu nvswitch pcie_switch cpu nic net_switch
[[nodiscard]] std::string_view name(LinkType type) noexcept;    // nvlink pcie cpu socket network
[[nodiscard]] std::string_view name(PathClass c) noexcept;      // nvlink pcie host_staged socket network
[[nodiscard]] std::optional<DeviceKind> parse_device_kind(std::string_view text) noexcept;
[[nodiscard]] std::optional<LinkType> parse_link_type(std::string_view text) noexcept;

// NCCL's cost model (src/graph/tuning.cc) has one latency table per hardware class; this is the class a
// path's steps are charged at: NVLINK for NVLink, PCI for PCIe and host-staged paths, NET between nodes
// and for the socket transport (which is NCCL's network transport).
enum class NcclHwClass : std::uint8_t { kNvlink, kPci, kNet };
[[nodiscard]] NcclHwClass nccl_hw_class(PathClass c) noexcept;
[[nodiscard]] std::string_view name(NcclHwClass c) noexcept;  // NVLINK PCI NET

// True for the classes in which one GPU reads or writes the other's memory directly.
[[nodiscard]] constexpr bool is_p2p(PathClass c) noexcept { return c == PathClass::kNvlink || c == PathClass::kPcie; }

}  // namespace commscale::hw

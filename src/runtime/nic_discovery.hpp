#pragma once

// The network adapters of this host: hwloc lists the PCI devices that carry an RDMA device
// (OpenFabrics: mlx5_0) or a network interface (eth0), so virtual interfaces (veth, bridges, lo)
// never count as NICs; sysfs gives each port's rate and state (/sys/class/infiniband/DEV/ports/N/rate
// and state, /sys/class/net/IF/speed and operstate) and each adapter's PCIe link and place in the PCI
// tree. An interface that is the netdev of an RDMA device (ib0, a RoCE port) is counted once, as its
// RDMA port.

#include <filesystem>
#include <optional>
#include <string>

#include "hw/nic.hpp"

namespace commscale {

// Without hwloc (a build that did not find it) the list is empty and `status` says so.
[[nodiscard]] NicDiscovery discover_nics();

// "400 Gb/sec (4X NDR)" (InfiniBand sysfs) -> 400; nullopt for text that does not start with a rate.
[[nodiscard]] std::optional<double> parse_ib_rate_Gbps(const std::string& text);
// "4: ACTIVE" -> "ACTIVE".
[[nodiscard]] std::string parse_ib_state(const std::string& text);

// The ports of RDMA device `device` (/sys/class/infiniband/DEVICE under `ib_root`), each a NIC.
[[nodiscard]] std::vector<DiscoveredNic> rdma_ports(const std::string& device, const std::filesystem::path& ib_root);
// A network interface (/sys/class/net/NAME under `net_root`): speed in Mb/s, operstate.
[[nodiscard]] DiscoveredNic network_interface(const std::string& name, const std::filesystem::path& net_root);

}  // namespace commscale

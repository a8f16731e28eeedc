#pragma once

// A network adapter port as discovery finds it (runtime/nic_discovery.hpp: hwloc for the adapters on
// the PCI bus, sysfs for their rate and state). Plain data, so doctor's checks of it are tested
// without the hardware.

#include <optional>
#include <string>
#include <vector>

#include "hw/machine.hpp"

namespace commscale {

struct DiscoveredNic {
  std::string name;        // "mlx5_0:1" (an RDMA device and port) or "eth0" (a network interface)
  std::string kind;        // "InfiniBand", "Ethernet" (RoCE ports of an RDMA device say "Ethernet" too)
  std::string pci_bus_id;  // normalized; empty when hwloc gives none
  int numa_node = -1;
  std::vector<std::string> pci_path;  // sysfs: root complex, bridges, the adapter
  PcieLink pcie_max;                  // the adapter's own PCIe link
  PcieLink pcie_current;
  std::optional<double> rate_Gbps;  // the port's line rate now; none while the link is down
  std::string state;                // "ACTIVE", "DOWN", "up", "down", ...; empty when unknown
  bool active = false;              // the port carries traffic (RDMA ACTIVE, or the interface is up)
  std::string rate_source;          // the sysfs file the rate was read from
  bool operator==(const DiscoveredNic&) const = default;
};

struct NicDiscovery {
  std::vector<DiscoveredNic> nics;
  std::string status;  // empty when hwloc ran; else why no NIC could be discovered
};

}  // namespace commscale

#pragma once

// What Linux's sysfs says about a PCI device: where it sits in the PCI tree, its NUMA node and its
// PCIe link. Needs no driver, so it still describes a GPU where NVML is missing.

#include <filesystem>
#include <string>
#include <vector>

#include "hw/machine.hpp"

namespace commscale {

struct SysfsPciFacts {
  std::vector<std::string> path;  // "pci0000:00", the bridges, then the device; empty when not found
  int numa_node = -1;
  PcieLink max;
  PcieLink current;
};

// The first line of a sysfs file, without its newline; empty when it cannot be read.
[[nodiscard]] std::string read_sysfs_line(const std::filesystem::path& file);

// Reads devices_dir/<bus_id> (a link into /sys/devices/pci...). Anything missing stays unknown.
[[nodiscard]] SysfsPciFacts read_sysfs_pci(const std::string& bus_id,
                                           const std::filesystem::path& devices_dir = "/sys/bus/pci/devices");

}  // namespace commscale

#pragma once

// Machine discovery: fills a MachineDiscovery (hw/machine.hpp) from CUDA, NVML and sysfs.

#include <vector>

#include "hw/machine.hpp"

namespace commscale {

// Discovers the CUDA devices `devices` (all visible ones when empty), in that order. With no GPU
// (no driver, no device, a build without CUDA) returns a discovery with no_gpu_reason set. Throws
// InputError naming --devices for a device that does not exist or is listed twice.
[[nodiscard]] MachineDiscovery discover_machine(const std::vector<int>& devices);

}  // namespace commscale

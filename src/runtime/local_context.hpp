#pragma once

// The context block of a single-process command (topo, p2p), which starts no MPI: one process sees
// every GPU, so the block lists one placement per GPU it used, all of rank 0.

#include <string>

#include "core/run_context.hpp"
#include "hw/machine.hpp"

namespace commscale {

[[nodiscard]] RunContext single_process_context(const std::string& command_line, const MachineDiscovery& m);

}  // namespace commscale

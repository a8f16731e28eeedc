#pragma once

// What `commscale topo` prints and writes: the GPU x GPU matrix as `nvidia-smi topo -m` lays it out
// (plus P2P access and each GPU's links), the discovery as JSON with the context block, and the
// pairs as CSV. Pure functions of a MachineDiscovery.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/run_context.hpp"
#include "hw/machine.hpp"

namespace commscale {

inline constexpr int kTopoSchemaVersion = 1;

[[nodiscard]] std::string format_topo_text(const MachineDiscovery& m, const RunContext& context);

// {"schema_version", "kind": "commscale-topo", "context", "host", "gpus", "pairs", ...}.
[[nodiscard]] nlohmann::json topo_json(const MachineDiscovery& m, const RunContext& context);

// One line per ordered pair: gpu_a,gpu_b,link,nvlink_lanes,via_nvswitch,pcie_relation,p2p,performance_rank.
[[nodiscard]] std::string topo_csv(const MachineDiscovery& m);

}  // namespace commscale

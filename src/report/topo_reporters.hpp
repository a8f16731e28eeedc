#pragma once

// What `commscale topo` prints and writes: the GPU x GPU matrix as `nvidia-smi topo -m` lays it out
// (plus P2P access and each GPU's links), the discovery as JSON with the context block, and the
// pairs as CSV. Pure functions of a MachineDiscovery.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/json_at.hpp"
#include "core/run_context.hpp"
#include "hw/machine.hpp"

namespace commscale {

inline constexpr int kTopoSchemaVersion = 1;

[[nodiscard]] std::string format_topo_text(const MachineDiscovery& m, const RunContext& context);

// One ordered pair of GPUs as the file lists it: what was discovered of it, and the matrix cell and
// NVLink lanes derived from the whole discovery when the file was written.
struct TopoPair {
  int a = 0;
  int b = 0;
  std::string link;  // the matrix cell: "NV18", "PIX", "SYS", ...
  int nvlink_lanes = 0;
  bool via_nvswitch = false;
  PeerFacts facts;
  bool operator==(const TopoPair&) const = default;
};

// A topo file, field by field: `commscale report` reads it back into this.
struct TopoFile {
  RunContext context;
  std::string host;
  std::string no_gpu_reason;
  std::string gpu_driver;
  std::string cuda_driver;
  std::string cuda_runtime;
  std::optional<std::string> nvml_status;  // none without GPUs; "used" when NVML was
  std::vector<DiscoveredGpu> gpus;
  std::vector<TopoPair> pairs;
};

[[nodiscard]] TopoFile topo_file(const MachineDiscovery& m, const RunContext& context);

// {"schema_version", "kind": "commscale-topo", "context", "host", "gpus", "pairs", ...}.
void to_json(nlohmann::json& out, const TopoFile& topo);
[[nodiscard]] nlohmann::json topo_json(const MachineDiscovery& m, const RunContext& context);
// The inverse of to_json: every key is required, as topo has always written it; errors name the file
// and key ("topo.json: gpus[1].pcie_max.width").
[[nodiscard]] TopoFile topo_from_json(const JsonAt& in);

// One line per ordered pair: gpu_a,gpu_b,link,nvlink_lanes,via_nvswitch,pcie_relation,p2p,performance_rank.
[[nodiscard]] std::string topo_csv(const MachineDiscovery& m);

}  // namespace commscale

#pragma once

// The line rate of the path each p2p measurement takes, so that every bandwidth is also reported as
// a fraction of what its link could carry. Per direction: NVLink lanes x the catalog GPU's per-link
// rate; PCIe from topologies/links.json by generation and width. P2P over PCIe and the staged path
// cross both GPUs' PCIe links, so they get the narrower one. Unknown (nullopt) where the catalog or
// the discovery cannot say: a GPU the catalog lacks has no NVLink rate, and without NVML nobody
// knows whether a P2P pair talks over NVLink.

#include <cstddef>
#include <optional>
#include <string>

#include "bench/p2p_result.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/reference.hpp"
#include "hw/machine.hpp"

namespace commscale {

struct PathRate {
  std::string link;                   // "NV18", "PCIe gen5 x16 P2P", "staged over PCIe gen5 x16"
  std::optional<GBps> per_direction;  // line rate, one direction
  std::string basis;                  // how the rate was derived, for the report's notes
};

// `gpu` (the catalog GPU) and `ref` (links.json) may be null when unavailable.
[[nodiscard]] PathRate pair_rate(const MachineDiscovery& m, std::size_t a, std::size_t b, PeerPath path,
                                 const hw::GpuSpec* gpu, const hw::ReferenceData* ref);
[[nodiscard]] PathRate host_rate(const MachineDiscovery& m, std::size_t g, const hw::ReferenceData* ref);

// Sets `link` and every line_rate of the report (twice the per-direction rate for bidirectional
// results) and adds each distinct basis to the notes. report.gpus must be m.gpus, in order.
void apply_line_rates(P2pReport& report, const MachineDiscovery& m, const hw::GpuSpec* gpu,
                      const hw::ReferenceData* ref);

}  // namespace commscale

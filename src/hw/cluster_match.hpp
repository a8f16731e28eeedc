#pragma once

// Which catalog cluster (topologies/clusters/) describes a machine `commscale topo` discovered: the
// one whose node holds the same number of GPUs of the catalog GPU topo matched, with NCCL's normal
// transports (the catalog's NCCL_P2P_DISABLE / NCCL_SHM_DISABLE variants emulate other machines).
// Pure: the discovered GPUs come in as plain names, so it is tested without a GPU.

#include <optional>
#include <string>
#include <vector>

#include "hw/catalog.hpp"

namespace commscale::hw {

struct DiscoveredName {
  std::string name;                        // the device's name, for messages: "NVIDIA H200"
  std::optional<std::string> catalog_gpu;  // topo's match in topologies/gpus/, if any
};

struct ClusterMatch {
  std::optional<std::string> cluster;  // the first match by name
  std::vector<std::string> others;     // the other matches, by name
  std::string reason;                  // when none matched: why, in one sentence
};

[[nodiscard]] ClusterMatch match_cluster(const Catalog& catalog, const std::vector<DiscoveredName>& gpus);
// "h200x1", "h200x2 (also h200x4)" or "none: <reason>", for one line of output.
[[nodiscard]] std::string describe(const ClusterMatch& m);

}  // namespace commscale::hw

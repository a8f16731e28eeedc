#include "hw/cluster_match.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace commscale::hw {
namespace {

// "hgx-h200 (8 per node), h200x2 (2)": the clusters of one GPU, for the reason nothing matched.
std::string clusters_of(const std::vector<ClusterSpec>& clusters, const std::string& gpu) {
  std::string out;
  for (const ClusterSpec& c : clusters) {
    if (c.gpu.name != gpu) continue;
    out += fmt::format("{}{} ({} GPU{} per node{})", out.empty() ? "" : ", ", c.name, c.gpus_per_node(),
                       c.gpus_per_node() == 1 ? "" : "s", c.transports == Transports{} ? "" : ", emulated transports");
  }
  return out.empty() ? "none" : out;
}

}  // namespace

ClusterMatch match_cluster(const Catalog& catalog, const std::vector<DiscoveredName>& gpus) {
  ClusterMatch m;
  if (gpus.empty()) {
    m.reason = "topo found no GPU";
    return m;
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (!gpus[i].catalog_gpu) {
      m.reason = fmt::format("GPU {} ({}) is not a GPU of the catalog (topologies/gpus/)", i, gpus[i].name);
      return m;
    }
    if (*gpus[i].catalog_gpu != *gpus.front().catalog_gpu) {
      m.reason = fmt::format("the GPUs are of different models ({} and {}); a catalog cluster has one",
                             *gpus.front().catalog_gpu, *gpus[i].catalog_gpu);
      return m;
    }
  }
  const std::string& gpu = *gpus.front().catalog_gpu;
  const int count = static_cast<int>(gpus.size());
  std::vector<ClusterSpec> clusters;
  for (const std::string& name : catalog.cluster_names()) clusters.push_back(catalog.cluster(name, "hw match"));
  for (const ClusterSpec& c : clusters) {
    if (c.gpu.name != gpu || c.gpus_per_node() != count || !(c.transports == Transports{})) continue;
    if (m.cluster) {
      m.others.push_back(c.name);
    } else {
      m.cluster = c.name;
    }
  }
  if (!m.cluster) {
    m.reason = fmt::format(
        "no cluster of {}/clusters has {} {} on a node with NCCL's normal transports "
        "(clusters of {}: {})",
        catalog.root().string(), count, gpu, gpu, clusters_of(clusters, gpu));
  }
  return m;
}

std::string describe(const ClusterMatch& m) {
  if (!m.cluster) return "none: " + m.reason;
  std::string out = *m.cluster;
  if (!m.others.empty()) out += fmt::format(" (also {})", fmt::join(m.others, ", "));
  return out;
}

}  // namespace commscale::hw

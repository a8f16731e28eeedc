#include "predict/target.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "predict/group_links.hpp"

namespace commscale::predict {

Target make_target(const hw::Catalog& catalog, const hw::ClusterSpec& cluster, int nodes,
                   std::shared_ptr<const CalibrationProfile> calibration, HostCosts host) {
  hw::LinkGraph graph = hw::LinkGraph::build(cluster, nodes);
  std::vector<double> achievable = achievable_link_bw(graph, cluster, catalog.reference());
  const CalibrationProfile* profile = calibration.get();
  const AttentionIssue attention = host.attention;
  Target t{cluster,
           nodes,
           std::move(graph),
           std::move(achievable),
           std::move(calibration),
           ComputeModel(cluster.gpu, profile, attention),
           CommModel(parse_capability(*cluster.gpu.compute_capability.value), cluster.gpu.name, profile,
                     CommOptions{cluster.network && cluster.network->latency_given}),
           std::move(host),
           interference_for(cluster.gpu, profile),
           {},
           {},
           catalog_validation()};
  std::string clock_note;
  t.clock = clock_for(cluster.gpu, profile, &clock_note);
  if (t.host.framework.empty()) t.host.framework = "none";
  t.notes = cluster.what_if_notes;
  for (const std::string& note : t.compute.notes()) t.notes.push_back(note);
  if (!clock_note.empty()) t.notes.push_back(clock_note);
  if (profile != nullptr && !profile->collectives.empty() && profile->gpu.name != cluster.gpu.name) {
    t.notes.push_back(
        fmt::format("collective curves measured on {} not used for {}: they apply to that GPU's machines only",
                    profile->gpu.name, cluster.gpu.name));
  }
  return t;
}

int nodes_for(const hw::ClusterSpec& cluster, int world, const std::string& where) {
  const int per_node = cluster.gpus_per_node();
  if (world <= per_node) return 1;
  if (world % per_node != 0) {
    throw InputError(
        where, fmt::format("{} ranks are not a whole number of {}-GPU nodes of {}", world, per_node, cluster.name),
        fmt::format("at most {} or a multiple of {}", per_node, per_node));
  }
  if (!cluster.network) {
    throw InputError(
        where, fmt::format("{} ranks need {} nodes, and {} has no network", world, world / per_node, cluster.name),
        fmt::format("at most {} ranks on this cluster", per_node));
  }
  return world / per_node;
}

FitVerdict with_host_fit(FitVerdict gpu, const std::vector<StageMemory>& stages, const hw::ClusterSpec& cluster,
                          int world) {
  if (largest_host_total(stages).count() == 0) return gpu;
  if (!cluster.host_memory_GiB || !cluster.host_memory_GiB->value) {
    gpu.message += fmt::format("; host memory not checked: {} gives no host_memory_GiB", cluster.name);
    return gpu;
  }
  const int ranks = std::min(world, cluster.gpus_per_node());
  const FitVerdict host = check_host_fit(stages, ranks, Bytes(static_cast<std::uint64_t>(std::llround(*cluster.host_memory_GiB->value * kGiB))));
  if (!host.fits && gpu.fits) {
    gpu.fits = false;
    gpu.message = host.message;
    return gpu;
  }
  gpu.message += "; " + host.message;
  return gpu;
}

}  // namespace commscale::predict

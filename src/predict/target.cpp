#include "predict/target.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "predict/group_links.hpp"

namespace commscale::predict {
namespace {

// An offloaded optimizer's host, per rank (ComputeModel::set_host), measured on one H100 host
// (results/h100x1-2026-12-06b, launch/offload_probe.py): pinned copies reached 52.8-54.5 GB/s of PCIe gen5
// x16's 64, 0.84 of the link; PyTorch's fused CPU Adam updated 4.22 G parameters/s on 16 vCPUs, 0.264 G a
// core, while moving 28 bytes a parameter (the fp32 weight and both moments read and written, the fp32
// gradient read), so that memory bandwidth bounds it first on a host with few channels per core.
constexpr double kPinnedCopyShareOfPcie = 0.84;
constexpr double kCpuAdamParamsPerCoreS = 0.264e9;
constexpr double kCpuAdamBytesPerParam = 28.0;
// Without the cluster's host figures: a round assumption per GPU (a 2-socket host of 64 cores and
// 400 GB/s for 8 GPUs).
constexpr double kAssumedCoresPerGpu = 8.0;
constexpr double kAssumedHostGBpsPerGpu = 50.0;

// Every GPU of a node offloads at once: each rank has its share of the host's cores and memory bandwidth.
HostSide host_side(const hw::ClusterSpec& cluster, const hw::ReferenceData& ref) {
  const double ranks = cluster.gpus_per_node();
  const bool known = cluster.host_cpu_cores && cluster.host_cpu_cores->value && cluster.host_memory_bw_GBps &&
                     cluster.host_memory_bw_GBps->value;
  const double cores = known ? *cluster.host_cpu_cores->value / ranks : kAssumedCoresPerGpu;
  const double bw = known ? *cluster.host_memory_bw_GBps->value / ranks : kAssumedHostGBpsPerGpu;
  HostSide h;
  h.pcie = *cluster.gpu.pcie_bw(ref).value * kPinnedCopyShareOfPcie;  // every GPU file has its PCIe link
  h.copy = GBps(std::min(h.pcie.value(), bw));  // a copy writes or reads each byte once in host memory
  h.update_params_per_s = std::min(cores * kCpuAdamParamsPerCoreS, bw * 1e9 / kCpuAdamBytesPerParam);
  h.source = fmt::format(
      "offload: {:.1f} GB/s each way over PCIe ({:.1f} GB/s for copies during the step), CPU Adam at {:.2f} G "
      "parameters/s a rank ({:.1f} cores and {:.1f} GB/s of host memory a rank{})",
      h.pcie.value(), h.copy.value(), h.update_params_per_s / 1e9, cores, bw,
      known ? "" : ", assumed: the cluster gives no host_cpu_cores or host_memory_bw_GBps");
  return h;
}

}  // namespace

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
  t.compute.set_host(host_side(cluster, catalog.reference()));
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
  const FitVerdict host = check_host_fit(
      stages, ranks, Bytes(static_cast<std::uint64_t>(std::llround(*cluster.host_memory_GiB->value * kGiB))));
  if (!host.fits && gpu.fits) {
    gpu.fits = false;
    gpu.message = host.message;
    return gpu;
  }
  gpu.message += "; " + host.message;
  return gpu;
}

}  // namespace commscale::predict

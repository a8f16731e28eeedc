#pragma once

// What a prediction runs against: a cluster (its file and N nodes of it), the link graph with NCCL's
// achievable bandwidth per link, the GPU's compute model and the collective model, and the
// calibration profile they use, if any.

#include <memory>
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "hw/cluster_spec.hpp"
#include "hw/link_graph.hpp"
#include "parallel/plan_memory.hpp"
#include "predict/calibration.hpp"
#include "predict/clock.hpp"
#include "predict/comm_model.hpp"
#include "predict/compute_model.hpp"
#include "predict/interference.hpp"
#include "predict/validation_coverage.hpp"

namespace commscale::predict {

struct Target {
  hw::ClusterSpec cluster;
  int nodes = 1;
  hw::LinkGraph graph;
  std::vector<double> achievable;  // by link id, GB/s per direction (group_links.hpp)
  std::shared_ptr<const CalibrationProfile> calibration;
  ComputeModel compute;
  CommModel comm;
  // The framework whose host issues the ops (program/host_costs.hpp); "none" by default: device time.
  HostCosts host;
  InterferenceModel interference;  // the calibration's rows, else the catalog's, else none
  ClockModel clock;                // the calibration's curve where it was measured on this GPU, else none
  std::vector<std::string> notes;  // what the prediction should say about its inputs
  std::vector<ValidationEntry> validation;  // topologies/validation.json: what predictions were checked against

  [[nodiscard]] int gpus() const noexcept { return graph.ranks(); }
};

// `nodes` as LinkGraph::build takes it (InputError "--nodes" outside what the cluster allows).
[[nodiscard]] Target make_target(const hw::Catalog& catalog, const hw::ClusterSpec& cluster, int nodes,
                                 std::shared_ptr<const CalibrationProfile> calibration, HostCosts host = {});

// The nodes a world of `world` ranks needs on this cluster: 1 when it fits one node, else world / G.
// Throws InputError naming `where` when world is above one node and not a whole number of nodes, or
// when the cluster has no network for more than one node.
[[nodiscard]] int nodes_for(const hw::ClusterSpec& cluster, int world, const std::string& where);

// The GPU verdict `gpu` extended with the host's memory where the plan offloads (plan_memory.hpp): with the
// cluster's host_memory_GiB, the node's ranks (at most the world) must fit in it, else the verdict fails
// and says so; without that figure the message says host memory went unchecked.
[[nodiscard]] FitVerdict with_host_fit(FitVerdict gpu, const std::vector<StageMemory>& stages,
                                       const hw::ClusterSpec& cluster, int world);

}  // namespace commscale::predict

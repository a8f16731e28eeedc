#pragma once

// `compare`: one model across clusters, each with its best plan that fits (search.hpp's fast path to
// find it, then the full simulation of that plan for the figures shown), with the cost per million
// tokens and the energy per token (economics.hpp); and optionally a scaling sweep of one cluster from
// 1 GPU to thousands, the best plan at each size, with throughput and scaling efficiency
//   efficiency(N) = (tokens/s at N / N) / (tokens/s at N0 / N0),
// N0 the smallest size at which some plan fits. The global batch stays fixed over the sweep (strong
// scaling of one training job); sizes where it does not split over the GPUs have no plan.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/overrides.hpp"
#include "predict/prediction.hpp"
#include "predict/search.hpp"

namespace commscale::predict {

struct ClusterChoice {
  std::string cluster;  // catalog name or file
  int gpus = 0;         // 0: one node
};
// "hgx-a100" or "hgx-a100:1" (GPUs); InputError naming `where` otherwise.
[[nodiscard]] ClusterChoice parse_cluster_choice(const std::string& text, const std::string& where);

struct CompareEntry {
  std::string label;  // as given: "hgx-a100:1"
  std::string cluster;
  std::string gpu;
  int gpus = 0;
  int nodes = 1;
  std::size_t candidates = 0;
  std::size_t fitting = 0;
  std::string closest;               // when nothing fits: the plan needing the least memory, and by how much it misses
  std::string batch_hint;            // with no valid plan: the nearest global batches that use all its GPUs
  std::vector<std::string> notes;    // what was changed for this cluster's GPU or by the what-if overrides
  std::optional<PlanEstimate> best;  // the stage model's best plan
  std::optional<Prediction> prediction;  // its full simulation
  ClusterCost cost;
  std::optional<double> usd_per_million_tokens;
  std::optional<double> joules_per_token;
};

struct ScalingPoint {
  int gpus = 0;
  std::optional<PlanEstimate> best;
  double efficiency = 0.0;
  std::optional<double> usd_per_million_tokens;
};

struct CompareResult {
  std::string model;
  std::vector<CompareEntry> entries;
  std::string scaling_cluster;  // empty without a sweep
  std::vector<ScalingPoint> scaling;
  std::vector<std::string> notes;     // the scaling cluster's, as CompareEntry::notes
  std::vector<std::string> warnings;  // what-if overrides that cannot change the comparison (the caller's)
};

// The GPU counts of a sweep up to `max_gpus`: powers of two below one node, then the node times powers
// of two (only one node without a network).
[[nodiscard]] std::vector<int> scaling_sizes(const hw::ClusterSpec& cluster, int max_gpus);

// The user's prices (compare --price, --usd-per-gpu-hour), by what they name; economics.hpp says which
// basis uses which. A cluster's own (entry, then node) goes before its GPU's.
struct UserPrices {
  std::map<std::string, double> entries;    // by label as --clusters gives it ("hgx-a100:1"): USD for that entry
  std::map<std::string, double> nodes;      // by cluster name: USD per node
  std::map<std::string, double> gpus;       // by GPU name: USD per GPU bought
  std::map<std::string, double> gpu_hours;  // by cluster or GPU name: USD per GPU-hour
};

struct CompareInputs {
  TransformerConfig model;
  std::vector<ClusterChoice> clusters;
  std::vector<std::string> labels;
  SearchOptions search;
  UserPrices prices;
  std::shared_ptr<const CalibrationProfile> calibration;
  HostCosts host;  // the framework whose host issues every plan's ops
  std::optional<ClusterChoice> scaling;  // the cluster to sweep
  int scaling_max_gpus = 4096;
  std::vector<hw::Override> overrides;  // what-if changes to every cluster (--set)
  // The flags that chose the training type and flash attention (empty: defaults), for gpu_support.hpp:
  // a GPU that cannot run a default gets what it runs, one that cannot run a flag's choice is refused.
  std::string dtype_flag;
  std::string flash_flag;
};

// Called before each plan search with the searches done, their number and what the next one is
// ("hgx-h100, 8 GPUs"): a sweep to 65,536 GPUs takes minutes, and the command draws a progress line.
using CompareProgress = std::function<void(std::size_t done, std::size_t total, const std::string& next)>;

[[nodiscard]] CompareResult compare_clusters(const hw::Catalog& catalog, const CompareInputs& in,
                                             const CompareProgress& progress = {});

}  // namespace commscale::predict

#pragma once

// What a cluster costs to run, for `compare` and `search --rank-by cost`: the purchase price amortized
// over a number of years plus the GPUs' power at an energy price.
//
//   USD per hour   = price / (years x 8766 h) + GPUs x TDP / 1000 x USD per kWh
//   USD per 1M tokens = USD per hour / (tokens/s x 3600) x 1e6
//   energy per token  = GPUs x TDP / tokens/s (J)
//
// Price, in order: a price the user gives for the cluster (per node); the cluster file's
// system_price_USD (per node); else the GPUs' launch prices from the catalog (GPUs only, host
// excluded). Fewer GPUs than a node pay their share of the node's price. Data-centre GPUs have no list
// price: without a system price or a user price the cost is not computed, and the output says so.
// Power is the GPUs' TDP (board power for GeForce), host excluded: an upper bound for the GPUs alone.
// Defaults (assumptions, both flags): 3 years, a common depreciation period for servers; 0.15 USD/kWh,
// a round figure near the US commercial average electricity price.

#include <optional>
#include <string>

#include "hw/cluster_spec.hpp"

namespace commscale::predict {

inline constexpr double kDefaultYears = 3.0;
inline constexpr double kDefaultUsdPerKwh = 0.15;
inline constexpr double kHoursPerYear = 8766.0;

struct CostAssumptions {
  double years = kDefaultYears;
  double usd_per_kwh = kDefaultUsdPerKwh;
  std::optional<double> node_price_usd;  // the user's price for one node of the cluster
};

struct ClusterCost {
  bool priced = false;
  double price_usd = 0.0;    // of the GPUs used (their share of the nodes)
  std::string price_source;  // where the price came from, or why there is none
  double power_w = 0.0;      // GPUs x TDP
  double usd_per_hour = 0.0;
};

[[nodiscard]] ClusterCost cluster_cost(const hw::ClusterSpec& cluster, int gpus, const CostAssumptions& a);
// nullopt when the cluster has no price or the throughput is 0.
[[nodiscard]] std::optional<double> usd_per_million_tokens(const ClusterCost& cost, double tokens_per_s);
[[nodiscard]] std::optional<double> joules_per_token(const ClusterCost& cost, double tokens_per_s);

}  // namespace commscale::predict

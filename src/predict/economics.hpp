#pragma once

// What a cluster costs to run, for `compare` and `search --rank-by cost`, every cluster of one table
// priced on one basis (--cost-basis), which the output names:
//
//   system  whole systems bought and amortized: a node's price is the user's (--price CLUSTER=USD), else
//           the cluster file's system_price_USD, else its parts: GPUs at launch price + host_price_USD +
//           NICs x (nic_price_USD + switch_port_price_USD). A node missing any part has no price on this
//           basis, and the output says which part, rather than pricing it on another basis.
//   gpus    the GPUs alone at launch price (host, NICs and switches excluded for every cluster alike);
//           data-centre GPUs have no launch price.
//   cloud   rented: the user's USD per GPU-hour (--usd-per-gpu-hour CLUSTER=X), else the GPU file's
//           rental_USD_per_gpu_hour (an on-demand marketplace rate), energy included.
//
//   USD per hour      = price / (years x 8766 h) + power / 1000 x USD per kWh   (system, gpus)
//                     = GPUs x USD per GPU-hour                                  (cloud)
//   USD per 1M tokens = USD per hour / (tokens/s x 3600) x 1e6
//   energy per token  = power / tokens/s (J)
//   power             = GPUs x TDP + the node's host_power_W (else the stated host allowance) x node share
//
// Fewer GPUs than a node pay their share of the node. Defaults (assumptions, all flags): 3 years, a
// common depreciation period for servers; 0.15 USD/kWh, a round figure near the US commercial average
// electricity price; a host allowance of 500 W per node, a round figure for a server's CPUs, memory,
// fans and power-supply losses (no source).

#include <optional>
#include <string>
#include <string_view>

#include "hw/cluster_spec.hpp"

namespace commscale::predict {

inline constexpr double kDefaultYears = 3.0;
inline constexpr double kDefaultUsdPerKwh = 0.15;
inline constexpr double kDefaultHostWattsPerNode = 500.0;
inline constexpr double kHoursPerYear = 8766.0;

enum class CostBasis : std::uint8_t { kSystem, kGpus, kCloud };
[[nodiscard]] std::string_view name(CostBasis b) noexcept;  // system gpus cloud
[[nodiscard]] CostBasis parse_cost_basis(std::string_view text, std::string_view where);
// "whole systems", "GPUs only (host, NICs, switches excluded)", "cloud USD per GPU-hour".
[[nodiscard]] std::string_view describe(CostBasis b) noexcept;

struct CostAssumptions {
  double years = kDefaultYears;
  double usd_per_kwh = kDefaultUsdPerKwh;
  CostBasis basis = CostBasis::kSystem;
  std::optional<double> node_price_usd;                   // system: the user's price for one node of the cluster
  std::optional<double> usd_per_gpu_hour;                 // cloud: the user's rate for the cluster
  double host_watts_per_node = kDefaultHostWattsPerNode;  // when the cluster has no host_power_W
};

struct ClusterCost {
  bool priced = false;
  CostBasis basis = CostBasis::kSystem;
  double price_usd = 0.0;    // purchase price of the GPUs used (their share of the nodes); 0 for cloud
  std::string price_source;  // where the price came from, or why there is none on this basis
  double power_w = 0.0;      // GPUs x TDP + host share
  std::string power_source;
  double usd_per_hour = 0.0;
  double usd_per_gpu_hour = 0.0;  // cloud: the rate charged (0 where not priced)
};

[[nodiscard]] ClusterCost cluster_cost(const hw::ClusterSpec& cluster, int gpus, const CostAssumptions& a);
// nullopt when the cluster has no price or the throughput is 0.
[[nodiscard]] std::optional<double> usd_per_million_tokens(const ClusterCost& cost, double tokens_per_s);
[[nodiscard]] std::optional<double> joules_per_token(const ClusterCost& cost, double tokens_per_s);

}  // namespace commscale::predict

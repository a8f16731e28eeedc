#pragma once

// What a cluster costs to run, for `compare` and `search --rank-by cost`, every cluster of one table
// priced on one basis (--cost-basis), which the output names:
//
//   cloud   rented (the default: every catalog GPU has a rate): the user's USD per GPU-hour
//           (--usd-per-gpu-hour CLUSTER=X or GPU=X), else the GPU file's rental_USD_per_gpu_hour, an
//           on-demand rate with its provider and month; host and energy included.
//   system  whole systems bought today and amortized: the user's price of the entry (--price
//           CLUSTER:GPUS=USD) or of one node (--price CLUSTER=USD), else the node's parts, the same rule for
//           every cluster: GPUs at purchase price (--price GPU=USD, else the GPU file's purchase_price_USD:
//           street or used-market) + host_price_USD + NICs x (nic_price_USD + switch_port_price_USD). Only a
//           node whose parts lack a price falls back to the cluster file's system_price_USD (a list price of
//           its day); a node with neither has no price on this basis, and the output says which part.
//   gpus    the GPUs alone at purchase price (host, NICs and switches excluded for every cluster alike).
//
//   USD per hour      = price / (years x 8766 h) + power / 1000 x USD per kWh   (system, gpus)
//                     = GPUs x USD per GPU-hour                                  (cloud)
//   USD per 1M tokens = USD per hour / (tokens/s x 3600) x 1e6
//   energy per token  = power / tokens/s (J)
//   power             = GPUs x TDP + host power x node share
//
// Host power, one rule for every node so that nodes compare like with like (a DGX's datasheet maximum
// against a guess for a GeForce box would not): per node
//
//   host W = 300 W x CPU sockets + 25 W x NICs + 10% of the node's GPU TDP
//
// 300 W a socket: a server CPU of 2020-2025 draws 200-360 W at load, with its memory (8-12 DIMMs at about
// 5 W each). 25 W a NIC: a 100-400 Gb/s adapter with its optics. 10% of GPU power: the fans that move the
// GPUs' heat and the power supplies' loss (about 94% efficient) grow with that heat. NVSwitch chips and
// PCIe switches are not counted apart (no sourced figure here; within the 10%). All are round figures,
// unverified. A cluster file's host_power_W (a node measured) replaces the rule for that node, and
// --host-watts W replaces it for every node.
//
// Fewer GPUs than a node pay their share of the node. Defaults (assumptions, all flags): 3 years, a
// common depreciation period for servers; 0.15 USD/kWh, a round figure near the US commercial average
// electricity price.

#include <optional>
#include <string>
#include <string_view>

#include "hw/cluster_spec.hpp"

namespace commscale::predict {

inline constexpr double kDefaultYears = 3.0;
inline constexpr double kDefaultUsdPerKwh = 0.15;
inline constexpr double kHoursPerYear = 8766.0;
// The host rule (above).
inline constexpr double kHostWattsPerSocket = 300.0;
inline constexpr double kHostWattsPerNic = 25.0;
inline constexpr double kHostShareOfGpuPower = 0.10;

enum class CostBasis : std::uint8_t { kSystem, kGpus, kCloud };
[[nodiscard]] std::string_view name(CostBasis b) noexcept;  // system gpus cloud
[[nodiscard]] CostBasis parse_cost_basis(std::string_view text, std::string_view where);
// "whole systems ...", "GPUs only ...", "cloud USD per GPU-hour ...".
[[nodiscard]] std::string_view describe(CostBasis b) noexcept;

struct CostAssumptions {
  double years = kDefaultYears;
  double usd_per_kwh = kDefaultUsdPerKwh;
  CostBasis basis = CostBasis::kCloud;
  std::optional<double> entry_price_usd;      // system: the user's price of exactly the GPUs used (their nodes)
  std::optional<double> node_price_usd;       // system: the user's price for one node of the cluster
  std::optional<double> gpu_price_usd;        // system, gpus: the user's price of one GPU
  std::optional<double> usd_per_gpu_hour;     // cloud: the user's rate for the cluster
  std::optional<double> host_watts_per_node;  // every node's host power, in place of the rule
};

// A node's power beside its GPUs, and where it comes from.
struct HostPower {
  double watts = 0.0;
  std::string source;
};
[[nodiscard]] HostPower host_power(const hw::ClusterSpec& cluster, const CostAssumptions& a);
// The rule in words, from its constants: "300 W a CPU socket + 25 W a NIC + 10% of the GPUs' TDP".
[[nodiscard]] std::string host_rule_text();

struct ClusterCost {
  bool priced = false;
  CostBasis basis = CostBasis::kCloud;
  double price_usd = 0.0;    // purchase price of the GPUs used (their share of the nodes); 0 for cloud
  std::string price_source;  // where the price came from, or why there is none on this basis
  double power_w = 0.0;      // GPUs x TDP + host share
  std::string power_source;
  double usd_per_hour = 0.0;
};

[[nodiscard]] ClusterCost cluster_cost(const hw::ClusterSpec& cluster, int gpus, const CostAssumptions& a);
// nullopt when the cluster has no price or the throughput is 0.
[[nodiscard]] std::optional<double> usd_per_million_tokens(const ClusterCost& cost, double tokens_per_s);
[[nodiscard]] std::optional<double> joules_per_token(const ClusterCost& cost, double tokens_per_s);

}  // namespace commscale::predict

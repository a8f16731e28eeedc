#pragma once

// The cost flags of search and compare (predict/economics.hpp): --cost-basis, --years, --usd-per-kwh,
// --host-watts, and the per-cluster prices of compare (--price CLUSTER=USD, --usd-per-gpu-hour
// CLUSTER=X), which search takes as plain numbers for its one cluster.

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "predict/economics.hpp"

namespace commscale {

struct CostArguments {
  std::string basis;                         // empty: cloud when a GPU-hour price is given, else system
  std::vector<std::string> node_prices;      // compare: CLUSTER=USD
  std::vector<std::string> gpu_hour_prices;  // compare: CLUSTER=USD per GPU-hour
};

// --cost-basis --years --usd-per-kwh --host-watts.
void add_cost_options(CLI::App& command, predict::CostAssumptions* costs, CostArguments* args);

// Sets costs->basis; `cloud_given` says whether some GPU-hour price was given, `system_given` whether a
// node price was. A price of the other basis than the one chosen is an error naming its flag.
void finish_cost_basis(const CostArguments& args, bool system_given, bool cloud_given, predict::CostAssumptions* costs);

// "CLUSTER=VALUE" items of `flag` (comma lists allowed), each value checked against `range`.
[[nodiscard]] std::map<std::string, double> parse_cluster_values(const std::vector<std::string>& items,
                                                                 const std::string& flag, const std::string& meaning);

}  // namespace commscale

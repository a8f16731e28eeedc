#pragma once

// The cost flags of search and compare (predict/economics.hpp): --cost-basis, --years, --usd-per-kwh,
// --host-watts, and the prices of compare (--price GPU=USD | CLUSTER=USD | CLUSTER:GPUS=USD,
// --usd-per-gpu-hour CLUSTER=X | GPU=X), which search takes as plain numbers for its one cluster.

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "predict/economics.hpp"

namespace commscale {

struct CostArguments {
  std::string basis;                         // empty: cloud, or system when --price is given
  std::vector<std::string> node_prices;      // compare: --price items
  std::vector<std::string> gpu_hour_prices;  // compare: CLUSTER=USD or GPU=USD per GPU-hour
  double host_watts = 0.0;
  const CLI::Option* host_watts_flag = nullptr;
};

// --cost-basis --years --usd-per-kwh --host-watts.
void add_cost_options(CLI::App& command, predict::CostAssumptions* costs, CostArguments* args);

// Which kinds of price the user gave: a whole system's (a node or an entry), a GPU's purchase price, a
// rate per GPU-hour.
struct PricesGiven {
  bool system = false;
  bool gpu = false;
  bool cloud = false;
};

// Sets costs->basis and the host power. A price of another basis than the one chosen is an error naming
// its flag: every cluster of a table is priced on one basis.
void finish_cost_basis(const CostArguments& args, PricesGiven given, predict::CostAssumptions* costs);

// "KEY=VALUE" items of `flag` (comma lists allowed), each value checked against the price range;
// `form` is what the message says is expected ("CLUSTER=USD per GPU-hour").
[[nodiscard]] std::map<std::string, double> parse_cluster_values(const std::vector<std::string>& items,
                                                                 const std::string& flag, const std::string& form);

}  // namespace commscale

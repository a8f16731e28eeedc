#include "cli/cost_options.hpp"

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/number_options.hpp"
#include "core/error.hpp"

namespace commscale {

void add_cost_options(CLI::App& cmd, predict::CostAssumptions* costs, CostArguments* args) {
  cmd.add_option("--cost-basis", args->basis,
                 "how every cluster is priced: system (whole systems bought: GPUs, host, NICs, switch ports), gpus "
                 "(GPUs alone at launch price) or cloud (USD per GPU-hour); default system, or cloud with "
                 "--usd-per-gpu-hour");
  add_real_option(cmd, "--years", &costs->years, "years the purchase price is amortized over", years_range())
      ->capture_default_str();
  add_real_option(cmd, "--usd-per-kwh", &costs->usd_per_kwh, "energy price, USD per kWh", usd_per_kwh_range())
      ->capture_default_str();
  add_real_option(cmd, "--host-watts", &costs->host_watts_per_node,
                  "power of a node beside its GPUs, where the cluster file gives none (an assumption)",
                  {0.0, 1e6, "0 to 1000000 W", " W", false})
      ->capture_default_str();
}

void finish_cost_basis(const CostArguments& args, bool system_given, bool cloud_given,
                       predict::CostAssumptions* costs) {
  if (args.basis.empty()) {
    costs->basis = cloud_given ? predict::CostBasis::kCloud : predict::CostBasis::kSystem;
  } else {
    costs->basis = predict::parse_cost_basis(args.basis, "--cost-basis");
  }
  if (cloud_given && costs->basis != predict::CostBasis::kCloud) {
    throw InputError("--usd-per-gpu-hour", fmt::format("given with --cost-basis {}", name(costs->basis)),
                     "--cost-basis cloud: every cluster is priced on one basis");
  }
  if (system_given && costs->basis != predict::CostBasis::kSystem) {
    throw InputError("--price", fmt::format("given with --cost-basis {}", name(costs->basis)),
                     "--cost-basis system: a node's price is a whole-system price");
  }
  if (system_given && cloud_given) {
    throw InputError("--price", "given with --usd-per-gpu-hour", "prices of one basis: every cluster alike");
  }
}

std::map<std::string, double> parse_cluster_values(const std::vector<std::string>& items, const std::string& flag,
                                                   const std::string& meaning) {
  std::map<std::string, double> out;
  for (const std::string& item : items) {
    for (const std::string& one : split_list(item, flag)) {
      const std::size_t eq = one.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw InputError(flag, fmt::format("\"{}\"", one), fmt::format("CLUSTER={}", meaning));
      }
      const std::string cluster = one.substr(0, eq);
      out[cluster] = parse_real(one.substr(eq + 1), fmt::format("{} {}", flag, cluster), node_price_range());
    }
  }
  return out;
}

}  // namespace commscale

#include "cli/cost_options.hpp"

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/number_options.hpp"
#include "core/error.hpp"

namespace commscale {

void add_cost_options(CLI::App& cmd, predict::CostAssumptions* costs, CostArguments* args) {
  cmd.add_option("--cost-basis", args->basis,
                 "how every cluster is priced: cloud (rented, USD per GPU-hour; the default), system (whole systems "
                 "bought: GPUs, host, NICs, switch ports; the default with --price) or gpus (GPUs alone at purchase "
                 "price)");
  add_real_option(cmd, "--years", &costs->years, "years the purchase price is amortized over", years_range())
      ->capture_default_str();
  add_real_option(cmd, "--usd-per-kwh", &costs->usd_per_kwh, "energy price, USD per kWh", usd_per_kwh_range())
      ->capture_default_str();
  args->host_watts_flag = add_real_option(
      cmd, "--host-watts", &args->host_watts,
      fmt::format("power of every node beside its GPUs, in place of the host rule ({})", predict::host_rule_text()),
      {0.0, 1e6, "0 to 1000000 W", " W", false});
}

void finish_cost_basis(const CostArguments& args, PricesGiven given, predict::CostAssumptions* costs) {
  using predict::CostBasis;
  if (args.basis.empty()) {
    costs->basis = (given.system || given.gpu) && !given.cloud ? CostBasis::kSystem : CostBasis::kCloud;
  } else {
    costs->basis = predict::parse_cost_basis(args.basis, "--cost-basis");
  }
  if (args.host_watts_flag != nullptr && args.host_watts_flag->count() > 0)
    costs->host_watts_per_node = args.host_watts;
  if (given.cloud && costs->basis != CostBasis::kCloud) {
    throw InputError("--usd-per-gpu-hour", fmt::format("given with --cost-basis {}", name(costs->basis)),
                     "--cost-basis cloud: every cluster is priced on one basis");
  }
  if (given.system && costs->basis != CostBasis::kSystem) {
    throw InputError("--price", fmt::format("given with --cost-basis {}", name(costs->basis)),
                     "--cost-basis system: a node's price is a whole-system price");
  }
  if (given.gpu && costs->basis == CostBasis::kCloud) {
    throw InputError("--price", "given with --cost-basis cloud",
                     "--cost-basis system or gpus: a GPU's price is a purchase price");
  }
}

std::map<std::string, double> parse_cluster_values(const std::vector<std::string>& items, const std::string& flag,
                                                   const std::string& form) {
  std::map<std::string, double> out;
  for (const std::string& item : items) {
    for (const std::string& one : split_list(item, flag)) {
      const std::size_t eq = one.find('=');
      if (eq == std::string::npos || eq == 0) throw InputError(flag, fmt::format("\"{}\"", one), form);
      const std::string key = one.substr(0, eq);
      if (out.contains(key)) throw InputError(flag, fmt::format("\"{}\" is given twice", key), "each price once");
      out[key] = parse_real(one.substr(eq + 1), fmt::format("{} {}", flag, key), node_price_range());
    }
  }
  return out;
}

}  // namespace commscale

#include "predict/economics.hpp"

#include <fmt/format.h>

namespace commscale::predict {

ClusterCost cluster_cost(const hw::ClusterSpec& cluster, int gpus, const CostAssumptions& a) {
  ClusterCost c;
  const double share = static_cast<double>(gpus) / cluster.gpus_per_node();  // nodes, possibly a fraction of one
  if (a.node_price_usd) {
    c.priced = true;
    c.price_usd = *a.node_price_usd * share;
    c.price_source = fmt::format("given: {:.0f} USD per node", *a.node_price_usd);
  } else if (cluster.system_price_USD && cluster.system_price_USD->value) {
    c.priced = true;
    c.price_usd = *cluster.system_price_USD->value * share;
    c.price_source = fmt::format("{:.0f} USD per node ({}: {})", *cluster.system_price_USD->value,
                                 hw::tag_letter(cluster.system_price_USD->provenance.tag),
                                 cluster.system_price_USD->provenance.source);
  } else if (cluster.gpu.launch_price_USD.value) {
    c.priced = true;
    c.price_usd = *cluster.gpu.launch_price_USD.value * gpus;
    c.price_source = fmt::format("GPUs only, {} x {:.0f} USD launch price ({}), host excluded", gpus,
                                 *cluster.gpu.launch_price_USD.value, cluster.gpu.launch_price_USD.provenance.source);
  } else {
    c.price_source = fmt::format("no price: {} has no list price and {} no system price; give one with --price {}=USD",
                                 cluster.gpu.name, cluster.name, cluster.name);
  }
  c.power_w = cluster.gpu.tdp_W.value.value_or(0.0) * gpus;
  const double energy = c.power_w / 1000.0 * a.usd_per_kwh;
  c.usd_per_hour = (c.priced ? c.price_usd / (a.years * kHoursPerYear) : 0.0) + energy;
  return c;
}

std::optional<double> usd_per_million_tokens(const ClusterCost& cost, double tokens_per_s) {
  if (!cost.priced || !(tokens_per_s > 0)) return std::nullopt;
  return cost.usd_per_hour / (tokens_per_s * 3600.0) * 1e6;
}

std::optional<double> joules_per_token(const ClusterCost& cost, double tokens_per_s) {
  if (!(tokens_per_s > 0) || !(cost.power_w > 0)) return std::nullopt;
  return cost.power_w / tokens_per_s;
}

}  // namespace commscale::predict

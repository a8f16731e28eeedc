#include "predict/economics.hpp"

#include <array>

#include <fmt/format.h>

#include "core/names.hpp"

namespace commscale::predict {
namespace {

// "199000 USD (S: ...)": a figure with its tag and source.
std::string cited(double usd, const hw::Provenance& p) {
  return fmt::format("{:.0f} USD ({}: {})", usd, hw::tag_letter(p.tag), p.source);
}

bool known(const std::optional<hw::Figure<double>>& f) { return f && f->value; }

// A node from its parts, or why not: every part the node has must have a price.
void price_from_parts(const hw::ClusterSpec& c, ClusterCost& out, double share) {
  const int gpus = c.gpus_per_node();
  const int nics = c.node.count(hw::DeviceKind::kNic);
  std::string missing;
  if (!c.gpu.launch_price_USD.value) missing += fmt::format(", a GPU price ({} has no launch price)", c.gpu.name);
  if (!known(c.host_price_USD)) missing += ", host_price_USD";
  if (nics > 0 && !known(c.nic_price_USD)) missing += ", nic_price_USD";
  if (nics > 0 && !known(c.switch_port_price_USD)) missing += ", switch_port_price_USD";
  if (!missing.empty()) {
    out.price_source = fmt::format(
        "no whole-system price: {} has no system_price_USD and lacks {}; give one with "
        "--price {}=USD (one node)",
        c.name, missing.substr(2), c.name);
    return;
  }
  const double gpu_usd = *c.gpu.launch_price_USD.value;
  const double node = gpus * gpu_usd + *c.host_price_USD->value +
                      nics * (nics > 0 ? *c.nic_price_USD->value + *c.switch_port_price_USD->value : 0.0);
  out.priced = true;
  out.price_usd = node * share;
  out.price_source =
      fmt::format("{:.0f} USD per node from parts: {} GPUs x {} ({}), host {}", node, gpus,
                  cited(gpu_usd, c.gpu.launch_price_USD.provenance), c.gpu.launch_date.value.value_or("date unknown"),
                  cited(*c.host_price_USD->value, c.host_price_USD->provenance));
  if (nics > 0) {
    out.price_source += fmt::format(", {} NICs x {} + switch ports x {}", nics,
                                    cited(*c.nic_price_USD->value, c.nic_price_USD->provenance),
                                    cited(*c.switch_port_price_USD->value, c.switch_port_price_USD->provenance));
  }
}

void price_system(const hw::ClusterSpec& c, const CostAssumptions& a, ClusterCost& out, double share) {
  if (a.node_price_usd) {
    out.priced = true;
    out.price_usd = *a.node_price_usd * share;
    out.price_source = fmt::format("given: {:.0f} USD per node", *a.node_price_usd);
  } else if (known(c.system_price_USD)) {
    out.priced = true;
    out.price_usd = *c.system_price_USD->value * share;
    out.price_source = fmt::format("{} per node", cited(*c.system_price_USD->value, c.system_price_USD->provenance));
  } else {
    price_from_parts(c, out, share);
  }
}

void price_gpus(const hw::ClusterSpec& c, int gpus, ClusterCost& out) {
  const hw::Figure<double>& launch = c.gpu.launch_price_USD;
  if (!launch.value) {
    out.price_source = fmt::format(
        "no GPU price: {} has no launch price ({}); compare it on --cost-basis system "
        "or cloud",
        c.gpu.name, launch.provenance.source);
    return;
  }
  out.priced = true;
  out.price_usd = *launch.value * gpus;
  out.price_source = fmt::format("{} GPUs x {} launch price, {}", gpus, cited(*launch.value, launch.provenance),
                                 c.gpu.launch_date.value.value_or("date unknown"));
}

void price_cloud(const hw::ClusterSpec& c, const CostAssumptions& a, ClusterCost& out) {
  if (a.usd_per_gpu_hour) {
    out.priced = true;
    out.usd_per_gpu_hour = *a.usd_per_gpu_hour;
    out.price_source = fmt::format("given: {:g} USD per GPU-hour, energy included", *a.usd_per_gpu_hour);
    return;
  }
  const hw::Figure<double>& rate = c.gpu.rental_USD_per_gpu_hour;
  if (!rate.value) {
    out.price_source =
        fmt::format("no cloud price: {} has no rental_USD_per_gpu_hour; give one with --usd-per-gpu-hour {}=USD",
                    c.gpu.name, c.name);
    return;
  }
  out.priced = true;
  out.usd_per_gpu_hour = *rate.value;
  out.price_source = fmt::format("{:g} USD per GPU-hour, energy included ({}: {})", *rate.value,
                                 hw::tag_letter(rate.provenance.tag), rate.provenance.source);
}

}  // namespace

std::string_view name(CostBasis b) noexcept {
  constexpr std::array<std::string_view, 3> kNames = {"system", "gpus", "cloud"};
  return kNames[static_cast<std::size_t>(b)];
}

std::string_view describe(CostBasis b) noexcept {
  constexpr std::array<std::string_view, 3> kText = {"whole systems (GPUs, host, NICs and switch ports), amortized",
                                                     "GPUs only at launch price (host, NICs, switches excluded)",
                                                     "cloud USD per GPU-hour (energy included)"};
  return kText[static_cast<std::size_t>(b)];
}

CostBasis parse_cost_basis(std::string_view text, std::string_view where) {
  constexpr std::array kBases = {CostBasis::kSystem, CostBasis::kGpus, CostBasis::kCloud};
  return parse_by_name(kBases, text, where, "cost basis");
}

ClusterCost cluster_cost(const hw::ClusterSpec& cluster, int gpus, const CostAssumptions& a) {
  ClusterCost c;
  c.basis = a.basis;
  const double share = static_cast<double>(gpus) / cluster.gpus_per_node();  // nodes, possibly a fraction of one
  switch (a.basis) {
    case CostBasis::kSystem:
      price_system(cluster, a, c, share);
      break;
    case CostBasis::kGpus:
      price_gpus(cluster, gpus, c);
      break;
    case CostBasis::kCloud:
      price_cloud(cluster, a, c);
      break;
  }
  const double host_w = known(cluster.host_power_W) ? *cluster.host_power_W->value : a.host_watts_per_node;
  c.power_w = cluster.gpu.tdp_W.value.value_or(0.0) * gpus + host_w * share;
  c.power_source =
      known(cluster.host_power_W)
          ? fmt::format("GPU TDP + host {:.0f} W per node ({}: {})", host_w,
                        hw::tag_letter(cluster.host_power_W->provenance.tag), cluster.host_power_W->provenance.source)
          : fmt::format("GPU TDP + host allowance {:.0f} W per node (assumed: --host-watts)", host_w);
  const double energy = c.power_w / 1000.0 * a.usd_per_kwh;
  if (a.basis == CostBasis::kCloud) {
    c.usd_per_hour = c.usd_per_gpu_hour * gpus;
  } else {
    c.usd_per_hour = (c.priced ? c.price_usd / (a.years * kHoursPerYear) : 0.0) + energy;
  }
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

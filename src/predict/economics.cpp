#include "predict/economics.hpp"

#include <array>

#include <fmt/format.h>

#include "core/names.hpp"

namespace commscale::predict {
namespace {

// "1800 USD (U: ...)": a figure with its tag and source.
std::string cited(double usd, const hw::Provenance& p) {
  return fmt::format("{:g} USD ({}: {})", usd, hw::tag_letter(p.tag), p.source);
}

bool known(const std::optional<hw::Figure<double>>& f) { return f && f->value; }

// "1 GPU", "8 GPUs".
std::string gpu_count(int gpus) { return fmt::format("{} GPU{}", gpus, gpus == 1 ? "" : "s"); }

// One GPU's purchase price: the user's, else the GPU file's; nullopt with neither.
struct GpuPrice {
  double usd = 0.0;
  std::string source;
};
std::optional<GpuPrice> gpu_price(const hw::GpuSpec& gpu, const CostAssumptions& a) {
  if (a.gpu_price_usd) return GpuPrice{*a.gpu_price_usd, fmt::format("{:g} USD (given: --price)", *a.gpu_price_usd)};
  const hw::Figure<double>& f = gpu.purchase_price_USD;
  if (!f.value) return std::nullopt;
  return GpuPrice{*f.value, cited(*f.value, f.provenance)};
}

// A node from its parts, or why not: every part the node has must have a price.
void price_from_parts(const hw::ClusterSpec& c, const CostAssumptions& a, ClusterCost& out, double share) {
  const int gpus = c.gpus_per_node();
  const int nics = c.node.count(hw::DeviceKind::kNic);
  const std::optional<GpuPrice> gpu = gpu_price(c.gpu, a);
  std::string missing;
  if (!gpu) missing += fmt::format(", a GPU price ({} has no purchase_price_USD)", c.gpu.name);
  if (!known(c.host_price_USD)) missing += ", host_price_USD";
  if (nics > 0 && !known(c.nic_price_USD)) missing += ", nic_price_USD";
  if (nics > 0 && !known(c.switch_port_price_USD)) missing += ", switch_port_price_USD";
  if (!missing.empty()) {
    out.price_source = fmt::format(
        "no whole-system price: {} has no system_price_USD and lacks {}; give one with --price {}=USD (one "
        "node) or --price {}=USD (one GPU)",
        c.name, missing.substr(2), c.name, c.gpu.name);
    return;
  }
  const double node = gpus * gpu->usd + *c.host_price_USD->value +
                      nics * (nics > 0 ? *c.nic_price_USD->value + *c.switch_port_price_USD->value : 0.0);
  out.priced = true;
  out.price_usd = node * share;
  out.price_source = fmt::format("{:.0f} USD per node from parts: {} x {}, host {}", node, gpu_count(gpus), gpu->source,
                                 cited(*c.host_price_USD->value, c.host_price_USD->provenance));
  if (nics > 0) {
    out.price_source += fmt::format(", {} NICs x {} + switch ports x {}", nics,
                                    cited(*c.nic_price_USD->value, c.nic_price_USD->provenance),
                                    cited(*c.switch_port_price_USD->value, c.switch_port_price_USD->provenance));
  }
}

void price_system(const hw::ClusterSpec& c, int gpus, const CostAssumptions& a, ClusterCost& out, double share) {
  out.priced = true;
  if (a.entry_price_usd) {
    out.price_usd = *a.entry_price_usd;
    out.price_source = fmt::format("given: {:.0f} USD for {} and their host", *a.entry_price_usd, gpu_count(gpus));
  } else if (a.node_price_usd) {
    out.price_usd = *a.node_price_usd * share;
    out.price_source = fmt::format("given: {:.0f} USD per node", *a.node_price_usd);
  } else {
    // Parts first, so that every node is priced by the same rule at today's purchase prices; a whole
    // system's list price only where some part has none.
    out.priced = false;
    price_from_parts(c, a, out, share);
    if (!out.priced && known(c.system_price_USD)) {
      out.priced = true;
      out.price_usd = *c.system_price_USD->value * share;
      out.price_source = fmt::format("{} per node (the parts lack prices)",
                                     cited(*c.system_price_USD->value, c.system_price_USD->provenance));
    }
  }
}

void price_gpus(const hw::ClusterSpec& c, int gpus, const CostAssumptions& a, ClusterCost& out) {
  const std::optional<GpuPrice> gpu = gpu_price(c.gpu, a);
  if (!gpu) {
    out.price_source = fmt::format("no GPU price: {} has no purchase_price_USD ({}); give one with --price {}=USD",
                                   c.gpu.name, c.gpu.purchase_price_USD.provenance.source, c.gpu.name);
    return;
  }
  out.priced = true;
  out.price_usd = gpu->usd * gpus;
  out.price_source = fmt::format("{} x {}", gpu_count(gpus), gpu->source);
}

// The rate per GPU-hour: the user's, else the GPU file's.
void price_cloud(const hw::ClusterSpec& c, int gpus, const CostAssumptions& a, ClusterCost& out) {
  const hw::Figure<double>& rate = c.gpu.rental_USD_per_gpu_hour;
  if (a.usd_per_gpu_hour) {
    out.usd_per_hour = *a.usd_per_gpu_hour * gpus;
    out.price_source = fmt::format("given: {:g} USD per GPU-hour, energy included", *a.usd_per_gpu_hour);
  } else if (rate.value) {
    out.usd_per_hour = *rate.value * gpus;
    out.price_source = fmt::format("{} x {:g} USD per GPU-hour ({}: {}), energy included", gpu_count(gpus), *rate.value,
                                   hw::tag_letter(rate.provenance.tag), rate.provenance.source);
  } else {
    out.price_source =
        fmt::format("no cloud price: {} has no rental_USD_per_gpu_hour; give one with --usd-per-gpu-hour {}=USD",
                    c.gpu.name, c.name);
    return;
  }
  out.priced = true;
}

}  // namespace

std::string_view name(CostBasis b) noexcept {
  constexpr std::array<std::string_view, 3> kNames = {"system", "gpus", "cloud"};
  return kNames[static_cast<std::size_t>(b)];
}

std::string_view describe(CostBasis b) noexcept {
  constexpr std::array<std::string_view, 3> kText = {
      "whole systems bought (GPUs, host, NICs and switch ports), amortized",
      "GPUs only, bought at purchase price (host, NICs, switches excluded)",
      "cloud rental, on-demand USD per GPU-hour (host and energy included)"};
  return kText[static_cast<std::size_t>(b)];
}

CostBasis parse_cost_basis(std::string_view text, std::string_view where) {
  constexpr std::array kBases = {CostBasis::kSystem, CostBasis::kGpus, CostBasis::kCloud};
  return parse_by_name(kBases, text, where, "cost basis");
}

std::string host_rule_text() {
  return fmt::format("{:g} W a CPU socket + {:g} W a NIC + {:g}% of the GPUs' TDP", kHostWattsPerSocket,
                     kHostWattsPerNic, 100 * kHostShareOfGpuPower);
}

HostPower host_power(const hw::ClusterSpec& c, const CostAssumptions& a) {
  if (a.host_watts_per_node) {
    return {*a.host_watts_per_node,
            fmt::format("host {:.0f} W per node (given: --host-watts)", *a.host_watts_per_node)};
  }
  if (known(c.host_power_W)) {
    const hw::Provenance& p = c.host_power_W->provenance;
    return {*c.host_power_W->value,
            fmt::format("host {:.0f} W per node ({}: {})", *c.host_power_W->value, hw::tag_letter(p.tag), p.source)};
  }
  const int sockets = c.node.count(hw::DeviceKind::kCpu);
  const int nics = c.node.count(hw::DeviceKind::kNic);
  const double gpu_w = c.gpu.tdp_W.value.value_or(0.0) * c.gpus_per_node();
  const double w = kHostWattsPerSocket * sockets + kHostWattsPerNic * nics + kHostShareOfGpuPower * gpu_w;
  return {w, fmt::format("host {:.0f} W per node by the one host rule: {} CPU socket{} x {:.0f} W + {} NICs x {:.0f} W "
                         "+ {:.0f}% of {:.0f} W GPU TDP",
                         w, sockets, sockets == 1 ? "" : "s", kHostWattsPerSocket, nics, kHostWattsPerNic,
                         100 * kHostShareOfGpuPower, gpu_w)};
}

ClusterCost cluster_cost(const hw::ClusterSpec& cluster, int gpus, const CostAssumptions& a) {
  ClusterCost c;
  c.basis = a.basis;
  const double share = static_cast<double>(gpus) / cluster.gpus_per_node();  // nodes, possibly a fraction of one
  switch (a.basis) {
    case CostBasis::kSystem:
      price_system(cluster, gpus, a, c, share);
      break;
    case CostBasis::kGpus:
      price_gpus(cluster, gpus, a, c);
      break;
    case CostBasis::kCloud:
      price_cloud(cluster, gpus, a, c);
      break;
  }
  const HostPower host = host_power(cluster, a);
  c.power_w = cluster.gpu.tdp_W.value.value_or(0.0) * gpus + host.watts * share;
  c.power_source = fmt::format("GPU TDP + {}", host.source);
  if (a.basis != CostBasis::kCloud) {
    const double energy = c.power_w / 1000.0 * a.usd_per_kwh;
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

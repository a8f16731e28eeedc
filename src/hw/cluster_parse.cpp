// Parsing cluster files: the top level, the node's devices, the transports, the network and the
// measurements. Links are parsed in cluster_links.cpp and the whole is checked in cluster_validate.cpp.

#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/size.hpp"
#include "hw/cluster_links.hpp"
#include "hw/cluster_spec.hpp"
#include "hw/figure_io.hpp"
#include "hw/json_numbers.hpp"

namespace commscale::hw {
namespace {

// Bounds of a measurement's figures: faster than any link is a typo, not a measurement.
constexpr double kMaxMeasuredGBps = 1e6;
constexpr double kMaxMeasuredUs = 1e9;

std::array<int, kDeviceKindCount> parse_devices(JsonObject& node) {
  JsonObject devices = node.object("devices");
  std::array<int, kDeviceKindCount> count{};
  for (std::size_t k = 0; k < kDeviceKindCount; ++k) {
    const auto kind = static_cast<DeviceKind>(k);
    if (kind == DeviceKind::kNetSwitch) continue;  // the link graph adds the network's switch
    const bool required = kind == DeviceKind::kGpu || kind == DeviceKind::kCpu;
    if (!required && !devices.has(name(kind))) continue;
    count[k] = devices.integer(name(kind), required ? 1 : 0, 4096);
  }
  devices.finish();
  return count;
}

NodeSpec parse_node(JsonObject& top, const ReferenceData& ref, const GpuSpec& gpu) {
  JsonObject node = top.object("node");
  NodeSpec spec;
  spec.device_count = parse_devices(node);
  if (node.has("nvswitch_chips")) {
    spec.nvswitch_chips = read_integer_figure(node, "nvswitch_chips", ref.citations, Nullable::kNo, 1, 64);
  }
  spec.links = parse_links(node, spec, ref, gpu);
  node.finish();
  return spec;
}

Transports parse_transports(JsonObject& top) {
  Transports t;
  if (!top.has("transports")) return t;
  JsonObject o = top.object("transports");
  if (o.has("p2p")) t.p2p = o.boolean("p2p");
  if (o.has("shm")) t.shm = o.boolean("shm");
  if (o.has("pcie_p2p")) t.pcie_p2p = o.boolean("pcie_p2p");
  o.finish();
  return t;
}

std::optional<NetworkSpec> parse_network(JsonObject& top, const ReferenceData& ref) {
  if (!top.has("network")) return std::nullopt;
  JsonObject o = top.object("network");
  NetworkSpec n;
  n.technology = o.string("technology");
  n.nic_rate_Gbps = read_number_figure(o, "nic_rate_Gbps", ref.citations, Nullable::kNo, 1e-9);
  if (o.has("nccl_port_GBps")) {
    n.nccl_port_GBps = read_number_figure(o, "nccl_port_GBps", ref.citations, Nullable::kNo, 1e-9);
  }
  const std::string topology = o.string("topology");
  if (topology != "nonblocking") {
    throw InputError(o.where("topology"), fmt::format("\"{}\" is not supported", topology),
                     "\"nonblocking\": one switch with full bisection between all NICs");
  }
  n.latency = ref.default_latency[static_cast<std::size_t>(LinkType::kNetwork)];
  if (o.has("latency_us")) {
    n.latency_given = from_us(read_number_figure(o, "latency_us", ref.citations, Nullable::kNo));
    n.latency = *n.latency_given;
  }
  o.finish();
  return n;
}

Measurement parse_measurement(JsonObject& o) {
  Measurement m;
  m.collective = parse_collective(o.string("collective"), o.where("collective"));
  m.size = o.string("size");
  (void)parse_size(m.size, o.where("size"));
  m.busbw_GBps = positive_number(o, "busbw_GBps", kMaxMeasuredGBps);
  m.algbw_GBps = positive_number(o, "algbw_GBps", kMaxMeasuredGBps);
  if (const nlohmann::json* t = o.optional("time_1KiB_us"))
    m.time_1KiB_us = expect_positive(*t, o.where("time_1KiB_us"), kMaxMeasuredUs);
  if (const nlohmann::json* env = o.optional("env")) m.env = expect_string(*env, o.where("env"));
  m.source = o.string("source");
  if (m.source.empty())
    throw InputError(o.where("source"), "is empty", "the machine, date and tool of the measurement");
  o.finish();
  return m;
}

Provenance parse_layout(JsonObject& top, const ReferenceData& ref) {
  JsonObject o = top.object("layout");
  Provenance p = read_provenance(o, ref.citations);
  o.finish();
  return p;
}

}  // namespace

bool ClusterSpec::pcie_p2p_allowed() const noexcept {
  return transports.pcie_p2p.value_or(gpu.p2p_over_pcie.value.value_or(false));
}

ClusterSpec parse_cluster(const nlohmann::json& json, const std::string& file, const ReferenceData& ref,
                          const GpuResolver& resolve_gpu) {
  JsonObject top(json, file, "");
  read_file_header(top, "cluster");
  ClusterSpec c;
  c.file = file;
  c.name = top.string("name");
  if (c.name.empty()) throw InputError(top.where("name"), "is empty", "the cluster's name, e.g. hgx-a100");
  c.description = top.string("description");
  c.gpu_ref = top.string("gpu");
  c.gpu = resolve_gpu(c.gpu_ref, top.where("gpu"));
  c.layout = parse_layout(top, ref);
  c.node = parse_node(top, ref, c.gpu);
  c.transports = parse_transports(top);
  c.network = parse_network(top, ref);
  // Prices and power may be 0; a host's memory, bandwidth and cores divide what it gives each rank.
  constexpr double kPositive = 1e-9;
  for (auto [key, field, min] : {std::tuple{"system_price_USD", &c.system_price_USD, 0.0},
                                 std::tuple{"host_price_USD", &c.host_price_USD, 0.0},
                                 std::tuple{"nic_price_USD", &c.nic_price_USD, 0.0},
                                 std::tuple{"switch_port_price_USD", &c.switch_port_price_USD, 0.0},
                                 std::tuple{"host_power_W", &c.host_power_W, 0.0},
                                 std::tuple{"host_memory_GiB", &c.host_memory_GiB, kPositive},
                                 std::tuple{"host_memory_bw_GBps", &c.host_memory_bw_GBps, kPositive},
                                 std::tuple{"host_cpu_cores", &c.host_cpu_cores, kPositive}}) {
    if (top.has(key)) *field = read_number_figure(top, key, ref.citations, Nullable::kYes, min);
  }
  if (top.has("measurements")) {
    for (JsonObject& m : top.objects("measurements")) c.measurements.push_back(parse_measurement(m));
  }
  if (top.has("notes")) c.notes = top.strings("notes");
  top.finish();
  validate_cluster(c);
  return c;
}

ClusterSpec load_cluster_file(const std::filesystem::path& file, const ReferenceData& ref,
                              const GpuResolver& resolve_gpu) {
  return parse_cluster(read_json_file(file), file.string(), ref, resolve_gpu);
}

}  // namespace commscale::hw

#include "bench/doctor_node.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/p2p.hpp"
#include "core/error.hpp"
#include "core/json_optional.hpp"
#include "core/size.hpp"
#include "runtime/discovery.hpp"
#include "runtime/nic_discovery.hpp"
#include "runtime/sysfs_pci.hpp"

namespace commscale {
namespace {

using predict::CheckStatus;
using predict::DoctorCheck;

// Big enough to run at the link's rate (a copy of 256 MiB takes 0.7 ms at 370 GB/s), small enough
// that 56 pairs of an 8-GPU node take about a second.
constexpr Bytes kCopySize(256ull << 20);

std::size_t shared_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

std::map<std::string, std::string> nearest_nics(const std::vector<DiscoveredNic>& nics,
                                                const std::vector<std::string>& gpu_buses) {
  std::map<std::string, std::string> nearest;
  for (const std::string& bus : gpu_buses) {
    if (bus.empty()) continue;
    const std::vector<std::string> path = read_sysfs_pci(bus).path;
    std::size_t best = 0;
    for (const DiscoveredNic& nic : nics) {
      const std::size_t shared = shared_prefix(path, nic.pci_path);
      if (shared > best || nearest.count(bus) == 0) {
        best = std::max(best, shared);
        nearest[bus] = nic.name;
      }
    }
  }
  return nearest;
}

NodeCopy copy_of(const BandwidthResult& r, int src, int dst, const std::string& src_bus, const std::string& dst_bus,
                 std::string path) {
  return NodeCopy{src, dst, src_bus, dst_bus, std::move(path), r.bw.value(), r.stats.cv, r.wrong_bytes};
}

void measure_copies(NodeMeasurement& m) {
  const MachineDiscovery machine = discover_machine({});
  if (machine.gpus.empty()) {
    m.copies_status = "no GPU visible to the node's first rank: " + machine.no_gpu_reason;
    return;
  }
  P2pOptions o;
  o.size = kCopySize;
  o.copies = 4;
  o.iters = 5;
  o.warmup = 1;
  o.sm = false;
  o.latency = false;
  const P2pReport r = run_p2p(o, machine);
  m.copies_what = fmt::format(
      "copy engines, {} per copy, {} samples of {} copies after {} warm-up batch, every copy "
      "checked; {} GPU(s) visible to the node's first rank",
      format_size(o.size), o.iters, o.copies, o.warmup, r.gpus.size());
  for (const HostResult& h : r.hosts) {
    const P2pGpu& g = r.gpus.at(static_cast<std::size_t>(h.gpu));
    m.copies.push_back(copy_of(h.h2d, -1, g.device, "host", g.pci_bus_id, "pinned host memory"));
    m.copies.push_back(copy_of(h.d2h, g.device, -1, g.pci_bus_id, "host", "pinned host memory"));
  }
  for (const PairResult& p : r.pairs) {
    const P2pGpu& a = r.gpus.at(static_cast<std::size_t>(p.src));
    const P2pGpu& b = r.gpus.at(static_cast<std::size_t>(p.dst));
    m.copies.push_back(copy_of(p.ce_uni, a.device, b.device, a.pci_bus_id, b.pci_bus_id,
                               p.path == PeerPath::kP2p ? "P2P" : "staged: " + p.why_staged));
  }
}

}  // namespace

NodeMeasurement measure_node(const DoctorOptions& /*options*/, const std::string& host,
                             const std::vector<std::string>& gpu_buses, bool gpu_backend) {
  NodeMeasurement m;
  m.host = host;
  m.nics = discover_nics();
  m.nearest_nic = nearest_nics(m.nics.nics, gpu_buses);
  if (!gpu_backend) {
    m.copies_status = "the CPU backend has no GPU to copy to";
    return m;
  }
  try {
    measure_copies(m);
  } catch (const RuntimeFailure& e) {
    m.copies_status = e.what();
  }
  return m;
}

void to_json(nlohmann::json& out, const NodeMeasurement& m) {
  nlohmann::json nics = nlohmann::json::array();
  for (const DiscoveredNic& n : m.nics.nics) {
    nics.push_back({{"name", n.name},
                    {"kind", n.kind},
                    {"pci_bus_id", n.pci_bus_id},
                    {"numa_node", n.numa_node},
                    {"pci_path", n.pci_path},
                    {"pcie_max", {n.pcie_max.generation, n.pcie_max.width}},
                    {"pcie_current", {n.pcie_current.generation, n.pcie_current.width}},
                    {"rate_Gbps", optional_json(n.rate_Gbps)},
                    {"state", n.state},
                    {"active", n.active},
                    {"rate_source", n.rate_source}});
  }
  nlohmann::json copies = nlohmann::json::array();
  for (const NodeCopy& c : m.copies) {
    copies.push_back({{"src_device", c.src_device},
                      {"dst_device", c.dst_device},
                      {"src_bus", c.src_bus},
                      {"dst_bus", c.dst_bus},
                      {"path", c.path},
                      {"GBps", c.GBps},
                      {"cv", c.cv},
                      {"wrong_bytes", c.wrong_bytes}});
  }
  out = {{"host", m.host},
         {"nics", nics},
         {"nic_status", m.nics.status},
         {"nearest_nic", m.nearest_nic},
         {"copies_status", m.copies_status},
         {"copies_what", m.copies_what},
         {"copies", copies}};
}

void from_json(const nlohmann::json& in, NodeMeasurement& m) {
  m.host = in.at("host").get<std::string>();
  m.nics.status = in.at("nic_status").get<std::string>();
  for (const nlohmann::json& j : in.at("nics")) {
    DiscoveredNic n;
    n.name = j.at("name").get<std::string>();
    n.kind = j.at("kind").get<std::string>();
    n.pci_bus_id = j.at("pci_bus_id").get<std::string>();
    n.numa_node = j.at("numa_node").get<int>();
    n.pci_path = j.at("pci_path").get<std::vector<std::string>>();
    n.pcie_max = {j.at("pcie_max").at(0).get<int>(), j.at("pcie_max").at(1).get<int>()};
    n.pcie_current = {j.at("pcie_current").at(0).get<int>(), j.at("pcie_current").at(1).get<int>()};
    read_optional(j, "rate_Gbps", n.rate_Gbps);
    n.state = j.at("state").get<std::string>();
    n.active = j.at("active").get<bool>();
    n.rate_source = j.at("rate_source").get<std::string>();
    m.nics.nics.push_back(std::move(n));
  }
  m.nearest_nic = in.at("nearest_nic").get<std::map<std::string, std::string>>();
  m.copies_status = in.at("copies_status").get<std::string>();
  m.copies_what = in.at("copies_what").get<std::string>();
  for (const nlohmann::json& j : in.at("copies")) {
    m.copies.push_back(NodeCopy{j.at("src_device").get<int>(), j.at("dst_device").get<int>(),
                                j.at("src_bus").get<std::string>(), j.at("dst_bus").get<std::string>(),
                                j.at("path").get<std::string>(), j.at("GBps").get<double>(), j.at("cv").get<double>(),
                                j.at("wrong_bytes").get<std::uint64_t>()});
  }
}

}  // namespace commscale

// Where `commscale doctor` takes its expectations from, on rank 0 once the job has started: the
// cluster --cluster names; else the catalog cluster `hw match` finds for rank 0's node's GPUs; else
// rank 0's node as `topo` discovers it, with the NICs discovery finds (the rate most of its RDMA ports
// run at) as its network; on the CPU backend without --cluster, only --expect and the job's peers.

#include "cli/doctor_expectations.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hw/cluster_match.hpp"
#include "hw/topology_dir.hpp"
#include "report/topo_cluster.hpp"
#include "runtime/discovery.hpp"
#include "runtime/nic_discovery.hpp"

namespace commscale {
namespace {

// The NUMA nodes that hold GPUs, in order: cluster_from_discovery's cpu devices.
std::vector<int> gpu_numa_nodes(const MachineDiscovery& m) {
  std::vector<int> nodes;
  for (const DiscoveredGpu& g : m.gpus) {
    if (g.numa_node >= 0) nodes.push_back(g.numa_node);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

// Adds the active RDMA ports as NICs on their NUMA node's CPU, and a network at the rate most of them
// run at. Returns the file form unchanged when there are none.
nlohmann::ordered_json with_nics(nlohmann::ordered_json file, const MachineDiscovery& m, const NicDiscovery& nics,
                                 std::vector<std::string>* notes) {
  std::map<double, int> rates;
  std::vector<const DiscoveredNic*> ports;
  for (const DiscoveredNic& n : nics.nics) {
    if (n.name.find(':') == std::string::npos || !n.active || !n.rate_Gbps || !n.pcie_max.known()) continue;
    ports.push_back(&n);
    ++rates[*n.rate_Gbps];
  }
  if (ports.empty()) {
    notes->push_back(nics.status.empty() ? "no active RDMA port on rank 0's node: nothing is expected of the network"
                                         : nics.status);
    return file;
  }
  const double rate = std::max_element(rates.begin(), rates.end(), [](const auto& a, const auto& b) {
                        return a.second < b.second;
                      })->first;
  const std::vector<int> numa = gpu_numa_nodes(m);
  auto& node = file["node"];
  node["devices"]["nic"] = ports.size();
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const auto at = std::find(numa.begin(), numa.end(), ports[i]->numa_node);
    const int cpu = at == numa.end() ? 0 : static_cast<int>(at - numa.begin());
    node["links"].push_back({{"a", fmt::format("nic{}", i)},
                             {"b", fmt::format("cpu{}", cpu)},
                             {"type", "pcie"},
                             {"generation", ports[i]->pcie_max.generation},
                             {"width", ports[i]->pcie_max.width},
                             {"note", fmt::format("{} (discovered)", ports[i]->name)}});
  }
  file["network"] = {{"technology", fmt::format("{} (discovered)", ports.front()->kind)},
                     {"nic_rate_Gbps",
                      {{"value", rate},
                       {"tag", "M"},
                       {"source", fmt::format("sysfs rate of {} of rank 0's node's {} active RDMA ports", rates[rate],
                                              ports.size())}}},
                     {"topology", "nonblocking"}};
  notes->push_back(fmt::format("network from rank 0's node: {} RDMA ports at {:g} Gb/s, each on its NUMA node's CPU",
                               ports.size(), rate));
  return file;
}

std::optional<hw::ClusterSpec> discovered_cluster(const MachineDiscovery& m, const hw::Catalog& catalog,
                                                  std::vector<std::string>* notes, std::string* why) {
  const DiscoveredGpu& first = m.gpus.front();
  if (first.catalog_gpu.empty()) {
    *why = fmt::format("the {} of rank 0's node is not in the GPU catalog: nothing to expect of it", first.name);
    return std::nullopt;
  }
  const hw::GpuSpec gpu = catalog.gpu(first.catalog_gpu, "discovery");
  const TopologyRequest request{"discovered", "(rank 0's node as discovered)", first.catalog_gpu, gpu,
                                utc_timestamp().substr(0, 10)};
  nlohmann::ordered_json file = hw::cluster_to_json(cluster_from_discovery(m, request, catalog.reference()));
  file = with_nics(std::move(file), m, discover_nics(), notes);
  const hw::GpuResolver resolve = [&](const std::string& ref, const std::string& where) {
    return catalog.gpu(ref, where);
  };
  return hw::parse_cluster(nlohmann::json::parse(file.dump()), request.file, catalog.reference(), resolve);
}

}  // namespace

std::unique_ptr<predict::DoctorExpectations> doctor_expectations(const DoctorExpectArguments& a,
                                                                 const RunContext& context, bool gpu_backend) {
  const int nodes = static_cast<int>(context.hosts.size());
  std::optional<hw::Catalog> catalog;
  try {
    catalog = hw::Catalog::open(hw::find_topologies_dir());
  } catch (const InputError& e) {
    return std::make_unique<predict::DoctorExpectations>(
        a.stated, fmt::format("none: the catalog cannot be read ({}); only --expect and peers", e.what()), nullptr);
  }
  const auto& calibration = a.calibration;
  if (a.cluster) {
    return std::make_unique<predict::DoctorExpectations>(
        *catalog, *a.cluster, fmt::format("--cluster {}", a.cluster_name), nodes, calibration, a.stated);
  }
  if (!gpu_backend) {
    return std::make_unique<predict::DoctorExpectations>(
        a.stated,
        "none: the CPU backend has no GPU to find a catalog cluster by, and no --cluster was given; "
        "judged against --expect figures and the job's own peers",
        &catalog->reference());
  }
  MachineDiscovery m = discover_machine({});
  match_catalog_gpus(m, *catalog);
  std::vector<hw::DiscoveredName> names;
  for (const DiscoveredGpu& g : m.gpus) {
    names.push_back({g.name, g.catalog_gpu.empty() ? std::nullopt : std::optional<std::string>(g.catalog_gpu)});
  }
  const hw::ClusterMatch match = hw::match_cluster(*catalog, names);
  if (match.cluster) {
    return std::make_unique<predict::DoctorExpectations>(
        *catalog, catalog->cluster(*match.cluster, "hw match"),
        fmt::format("catalog cluster {}, which hw match finds for the {} GPU(s) of rank 0's node", *match.cluster,
                    m.gpus.size()),
        nodes, calibration, a.stated);
  }
  std::vector<std::string> notes = {fmt::format("no catalog cluster: {}", match.reason)};
  std::string why;
  std::optional<hw::ClusterSpec> found;
  try {
    found = discovered_cluster(m, *catalog, &notes, &why);
  } catch (const InputError& e) {  // GPUs of different models, a link the catalog cannot describe
    why = fmt::format("rank 0's node cannot be described as a topology file: {}", e.what());
  }
  if (!found) {
    return std::make_unique<predict::DoctorExpectations>(a.stated, "none: " + why, &catalog->reference());
  }
  auto e = std::make_unique<predict::DoctorExpectations>(*catalog, *found, "rank 0's node as topo discovers it", nodes,
                                                         calibration, a.stated);
  for (const std::string& n : notes) e->add_note(n);
  return e;
}

}  // namespace commscale

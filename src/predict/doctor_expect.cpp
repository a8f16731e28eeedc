#include "predict/doctor_expect.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/size.hpp"
#include "hw/gpu_match.hpp"
#include "predict/group_links.hpp"

namespace commscale::predict {
namespace {

bool at_gpu(const hw::LinkSpec& l, int gpu) {
  const hw::DeviceRef d{hw::DeviceKind::kGpu, gpu};
  return l.a == d || l.b == d;
}

std::string describe_estimate(const CommEstimate& e) { return fmt::format("{} {}", name(e.algo), name(e.proto)); }

}  // namespace

const std::vector<StatedKey>& stated_keys() {
  static const std::vector<StatedKey> keys = {
      {"gemm", "TFLOP/s", "the sustained GEMM of each GPU"},
      {"host_copy", "GB/s", "each pinned host <-> GPU copy, one direction"},
      {"p2p", "GB/s", "each GPU -> GPU copy inside a node"},
      {"nic", "Gb/s", "each RDMA port's line rate"},
      {"node_all_reduce", "GB/s", "all_reduce bus bandwidth inside each node, all nodes at once"},
      {"all_reduce", "GB/s", "all_reduce bus bandwidth across the job"},
      {"all_gather", "GB/s", "all_gather bus bandwidth across the job"},
      {"pair", "GB/s", "each transfer of the pair rounds, one direction"},
  };
  return keys;
}

DoctorExpectations::DoctorExpectations(std::map<std::string, double> stated, std::string why,
                                       const hw::ReferenceData* reference)
    : stated_(std::move(stated)), source_(std::move(why)) {
  if (reference != nullptr) reference_ = *reference;
}

DoctorExpectations::DoctorExpectations(const hw::Catalog& catalog, const hw::ClusterSpec& cluster, std::string source,
                                       int nodes, std::shared_ptr<const CalibrationProfile> calibration,
                                       std::map<std::string, double> stated)
    : stated_(std::move(stated)),
      reference_(catalog.reference()),
      catalog_gpus_(catalog.gpu_names()),
      source_(std::move(source)),
      node_(std::make_unique<hw::ClusterSpec>(cluster)) {
  one_node_ = std::make_unique<Target>(make_target(catalog, cluster, 1, calibration));
  if (nodes <= 1) {
    target_ = std::make_unique<Target>(make_target(catalog, cluster, 1, calibration));
  } else if (!cluster.network) {
    notes_.push_back(fmt::format("{} describes no network: nothing is expected of the {} nodes' links between them",
                                 cluster.name, nodes));
  } else {
    try {
      target_ = std::make_unique<Target>(make_target(catalog, cluster, nodes, calibration));
    } catch (const InputError& e) {
      notes_.push_back(fmt::format("no expectation across the {} nodes: {}", nodes, e.what()));
    }
  }
  for (const std::string& n : one_node_->notes) notes_.push_back(n);
}

int DoctorExpectations::gpus_per_node() const noexcept { return node_ ? node_->gpus_per_node() : 0; }

std::optional<Expected> DoctorExpectations::stated(const std::string& key) const {
  const auto it = stated_.find(key);
  if (it == stated_.end()) return std::nullopt;
  return Expected{it->second, fmt::format("--expect {}={:g}", key, it->second), true};
}

std::optional<Expected> DoctorExpectations::gpu_model(const std::string& device_name, bool* matches) const {
  if (!node_) return std::nullopt;
  const std::optional<std::string> found = hw::match_gpu_name(device_name, catalog_gpus_);
  *matches = found && *found == node_->gpu.name;
  return Expected{0.0,
                  fmt::format("{} names {} ({}); the device is {}", node_->name, node_->gpu.name,
                              node_->gpu.display_name, found ? *found : "no catalog GPU"),
                  true};
}

std::optional<double> DoctorExpectations::pcie_GBps(int generation, int width) const {
  if (generation <= 0 || width <= 0) return std::nullopt;
  // links.json starts at gen3; a link stuck at gen1 or gen2 must still read as slow, not as unknown.
  // PCIe 1.0 and 2.0 run 2.5 and 5 GT/s per lane with 8b/10b encoding: 4.0 and 8.0 GB/s per direction x16.
  if (generation <= 2) return (generation == 1 ? 4.0 : 8.0) * width / 16.0;
  if (!reference_ || reference_->pcie_x16_bw.count(generation) == 0) return std::nullopt;
  return reference_->pcie_bw(generation, width, "PCIe").value->value();
}

std::optional<Expected> DoctorExpectations::gemm_TFLOPS(DataType type) const {
  if (auto s = stated("gemm")) return s;
  if (!node_) return std::nullopt;
  const hw::Figure<FlopsPerSecond>& peak = node_->gpu.rate(hw::gemm_rate(type));
  if (!peak.known()) return std::nullopt;
  const double tflops = peak.value->value() / 1e12;
  return Expected{tflops * kGemmFraction,
                  fmt::format("{} {} dense {:g} TFLOP/s x {:.2f} (sustained 8192^3 on H200, "
                              "results/h200x1-2026-12-03c)",
                              node_->gpu.name, name(type), tflops, kGemmFraction),
                  true};
}

std::optional<Expected> DoctorExpectations::nvlink_links(int gpu) const {
  if (!node_ || gpu >= node_->gpus_per_node()) return std::nullopt;
  int lanes = 0;
  for (const hw::LinkSpec& l : node_->node.links) {
    if (l.type == hw::LinkType::kNvlink && at_gpu(l, gpu)) lanes += l.lanes;
  }
  return Expected{static_cast<double>(lanes), fmt::format("{}: NVLink links of gpu{}", node_->name, gpu), true};
}

const hw::LinkSpec* DoctorExpectations::gpu_pcie(int gpu) const {
  if (!node_ || gpu >= node_->gpus_per_node()) return nullptr;
  for (const hw::LinkSpec& l : node_->node.links) {
    if (l.type == hw::LinkType::kPcie && at_gpu(l, gpu)) return &l;
  }
  return nullptr;
}

std::optional<Expected> DoctorExpectations::pcie_link(int gpu, int* generation, int* width) const {
  const hw::LinkSpec* l = gpu_pcie(gpu);
  if (l == nullptr || l->generation <= 0 || l->lanes <= 0) return std::nullopt;
  *generation = l->generation;
  *width = l->lanes;
  return Expected{static_cast<double>(l->generation * l->lanes),
                  fmt::format("{}: gpu{} on PCIe gen{} x{}", node_->name, gpu, l->generation, l->lanes), true};
}

std::optional<Expected> DoctorExpectations::host_copy_GBps(int gpu) const {
  if (auto s = stated("host_copy")) return s;
  const hw::LinkSpec* l = gpu_pcie(gpu);
  if (l == nullptr || !l->bw.known()) return std::nullopt;
  const double line = l->bw.value->value();
  return Expected{line * kHostCopyFraction,
                  fmt::format("{}: PCIe gen{} x{} {:g} GB/s x {:.2f} (pinned copies on H200, "
                              "results/h200x1-2026-12-01)",
                              node_->name, l->generation, l->lanes, line, kHostCopyFraction),
                  true};
}

std::optional<Expected> DoctorExpectations::p2p_copy_GBps(int gpu_a, int gpu_b) const {
  if (auto s = stated("p2p")) return s;
  if (!one_node_ || gpu_a >= gpus_per_node() || gpu_b >= gpus_per_node() || gpu_a == gpu_b) return std::nullopt;
  LinkAnalyzer analyzer(one_node_->graph, one_node_->achievable);
  const FlowLinks flow = analyzer.flows({{gpu_a, gpu_b}}).front();
  const hw::Path path = one_node_->graph.path(gpu_a, gpu_b);
  return Expected{flow.bw.value(),
                  fmt::format("{}: {} path {} at NCCL's per-link figures", node_->name, name(flow.path_class),
                              one_node_->graph.describe(path)),
                  true};
}

std::optional<Expected> DoctorExpectations::nic_rate_Gbps() const {
  if (auto s = stated("nic")) return s;
  if (!node_ || !node_->network || !node_->network->nic_rate_Gbps.known()) return std::nullopt;
  return Expected{*node_->network->nic_rate_Gbps.value,
                  fmt::format("{}: {} NIC port", node_->name, node_->network->technology), true};
}

std::optional<Expected> DoctorExpectations::measured_on_cluster(Collective c, Bytes bytes, int ranks) const {
  if (!node_ || ranks != node_->gpus_per_node()) return std::nullopt;
  for (const hw::Measurement& m : node_->measurements) {
    if (m.collective != c || !m.env.empty()) continue;
    if (parse_size(m.size, "measurements.size").count() != bytes.count()) continue;
    return Expected{m.busbw_GBps,
                    fmt::format("{}: measured {} {} on its machine ({})", node_->name, name(c), m.size, m.source),
                    true};
  }
  return std::nullopt;
}

std::vector<std::optional<Expected>> DoctorExpectations::collective_busbw(Collective c, Bytes bytes, DataType type,
                                                                          const std::vector<std::vector<int>>& groups,
                                                                          const std::string& key) const {
  std::vector<std::optional<Expected>> out(groups.size());
  if (auto s = stated(key)) {
    for (auto& e : out) e = s;
    return out;
  }
  const bool one_node = key == "node_all_reduce";
  const Target* t = one_node ? one_node_.get() : target_.get();
  if (t == nullptr) return out;
  for (const std::vector<int>& g : groups) {
    for (int r : g) {
      if (r < 0 || r >= t->graph.ranks()) return out;  // more ranks than the cluster has GPUs
    }
  }
  LinkAnalyzer analyzer(t->graph, t->achievable);
  const std::vector<GroupLinks> links = analyzer.groups(groups);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const int n = static_cast<int>(groups[i].size());
    if (n < 2) continue;
    if (auto m = measured_on_cluster(c, bytes, n); m && t->nodes == 1) {
      out[i] = m;
      continue;
    }
    const CommEstimate e = t->comm.collective(c, bytes, links[i]);
    const double busbw = CommModel::bus_bandwidth(c, bytes, type, n, e.time).value();
    std::string basis = e.calibrated
                            ? fmt::format("calibration curve of {} ranks", n)
                            : fmt::format("predictor: {} on the link graph of {}{}", describe_estimate(e), node_->name,
                                          t->nodes > 1 ? fmt::format(" x {} nodes", t->nodes) : "");
    const bool loose = !e.calibrated && links[i].intra_nvlink && links[i].nodes == 1 &&
                       (c == Collective::kAllGather || c == Collective::kReduceScatter);
    if (loose) basis += "; not judged: the model misses NCCL's NVLink channel limits for this collective";
    out[i] = Expected{busbw, std::move(basis), !loose};
  }
  return out;
}

}  // namespace commscale::predict

#include "report/p2p_line_rate.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "hw/topo_matrix.hpp"

namespace commscale {
namespace {

std::optional<GBps> pcie_rate(const PcieLink& link, const hw::ReferenceData* ref) {
  if (ref == nullptr || !link.known() || !ref->pcie_x16_bw.contains(link.generation)) return std::nullopt;
  return ref->pcie_bw(link.generation, link.width, "PCIe link").value;
}

// The narrower of two GPUs' PCIe links, as text and rate.
std::pair<std::string, std::optional<GBps>> narrower_pcie(const DiscoveredGpu& a, const DiscoveredGpu& b,
                                                          const hw::ReferenceData* ref) {
  const std::optional<GBps> ra = pcie_rate(a.pcie_max, ref);
  const std::optional<GBps> rb = pcie_rate(b.pcie_max, ref);
  if (!ra) return {pcie_text(a.pcie_max), std::nullopt};
  if (!rb) return {pcie_text(b.pcie_max), std::nullopt};
  return *rb < *ra ? std::pair{pcie_text(b.pcie_max), rb} : std::pair{pcie_text(a.pcie_max), ra};
}

std::string pcie_basis(const std::optional<GBps>& rate, const std::string& text) {
  return rate ? fmt::format("PCIe {}: {:g} GB/s per direction (topologies/links.json)", text, rate->value())
              : fmt::format("PCIe {}: no line rate (generation or width unknown)", text);
}

void set_rate(BandwidthResult& r, const std::optional<GBps>& per_direction, double directions) {
  if (r.measured && per_direction) r.line_rate = *per_direction * directions;
}

}  // namespace

PathRate pair_rate(const MachineDiscovery& m, std::size_t a, std::size_t b, PeerPath path, const hw::GpuSpec* gpu,
                   const hw::ReferenceData* ref) {
  const auto [pcie, pcie_bw] = narrower_pcie(m.gpus.at(a), m.gpus.at(b), ref);
  if (path == PeerPath::kStaged) {
    return {fmt::format("staged over PCIe {}", pcie), pcie_bw, pcie_basis(pcie_bw, pcie)};
  }
  const NvlinkConnection nv = nvlink_connection(m, a, b);
  if (nv.lanes > 0) {
    const std::string link = fmt::format("NV{}{}", nv.lanes, nv.via_switch ? " via NVSwitch" : "");
    if (gpu == nullptr || !gpu->nvlink.link_bw.value) {
      return {link, std::nullopt, fmt::format("{}: no line rate (the GPU is not in the catalog)", link)};
    }
    const GBps per_link = *gpu->nvlink.link_bw.value;
    return {link, per_link * nv.lanes,
            fmt::format("{}: {} x {:g} GB/s per NVLink link per direction (catalog {})", link, nv.lanes,
                        per_link.value(), gpu->name)};
  }
  if (!m.nvml_status.empty()) {
    return {"P2P (link unknown)", std::nullopt, "P2P without NVML: NVLink or PCIe unknown, no line rate"};
  }
  return {fmt::format("PCIe {} P2P", pcie), pcie_bw, pcie_basis(pcie_bw, pcie)};
}

PathRate host_rate(const MachineDiscovery& m, std::size_t g, const hw::ReferenceData* ref) {
  const PcieLink& link = m.gpus.at(g).pcie_max;
  const std::optional<GBps> rate = pcie_rate(link, ref);
  return {fmt::format("PCIe {}", pcie_text(link)), rate, pcie_basis(rate, pcie_text(link))};
}

void apply_line_rates(P2pReport& report, const MachineDiscovery& m, const hw::GpuSpec* gpu,
                      const hw::ReferenceData* ref) {
  std::vector<std::string> bases;
  const auto note = [&bases](const std::string& basis) {
    if (std::find(bases.begin(), bases.end(), basis) == bases.end()) bases.push_back(basis);
  };
  for (PairResult& p : report.pairs) {
    const PathRate rate =
        pair_rate(m, static_cast<std::size_t>(p.src), static_cast<std::size_t>(p.dst), p.path, gpu, ref);
    p.link = rate.link;
    set_rate(p.ce_uni, rate.per_direction, 1.0);
    set_rate(p.sm_uni, rate.per_direction, 1.0);
    set_rate(p.ce_bi, rate.per_direction, 2.0);
    set_rate(p.sm_bi, rate.per_direction, 2.0);
    note(rate.basis);
  }
  for (HostResult& h : report.hosts) {
    const PathRate rate = host_rate(m, static_cast<std::size_t>(h.gpu), ref);
    h.link = rate.link;
    set_rate(h.h2d, rate.per_direction, 1.0);
    set_rate(h.d2h, rate.per_direction, 1.0);
    set_rate(h.bidir, rate.per_direction, 2.0);
    note(rate.basis);
  }
  for (const std::string& basis : bases) report.notes.push_back("line rate: " + basis);
}

}  // namespace commscale

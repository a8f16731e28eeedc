// The text form of `commscale topo`: nvidia-smi's matrix (same cell codes, same legend), with the
// P2P access matrix and one line per GPU below it.

#include <fmt/format.h>

#include "core/size.hpp"
#include "core/text_table.hpp"
#include "hw/topo_matrix.hpp"
#include "report/topo_reporters.hpp"

namespace commscale {
namespace {

std::string gpu_label(std::size_t i) { return fmt::format("GPU{}", i); }

std::string nvlink_summary(const DiscoveredGpu& g) {
  if (g.nvlinks.empty()) return "none reported";
  std::string text = fmt::format("{} of {} active", active_nvlinks(g), g.nvlinks.size());
  if (switch_nvlinks(g) > 0) text += fmt::format(" ({} to NVSwitch)", switch_nvlinks(g));
  if (g.nvlink_speed_MBps) text += fmt::format(", {:.0f} MB/s per link", *g.nvlink_speed_MBps);
  return text;
}

std::string link_matrix(const MachineDiscovery& m) {
  std::vector<std::string> headers = {""};
  for (std::size_t b = 0; b < m.gpus.size(); ++b) headers.push_back(gpu_label(b));
  for (const char* h : {"NUMA", "PCIe max", "PCIe now", "NVLink"}) headers.emplace_back(h);
  TextTable table(headers);
  for (std::size_t a = 0; a < m.gpus.size(); ++a) {
    const DiscoveredGpu& g = m.gpus[a];
    std::vector<std::string> row = {gpu_label(a)};
    for (std::size_t b = 0; b < m.gpus.size(); ++b) row.push_back(topo_cell(m, a, b));
    row.push_back(g.numa_node >= 0 ? std::to_string(g.numa_node) : "N/A");
    row.push_back(pcie_text(g.pcie_max));
    row.push_back(pcie_text(g.pcie_current));
    row.push_back(nvlink_summary(g));
    table.add(row);
  }
  return table.render();
}

std::string p2p_matrix(const MachineDiscovery& m) {
  std::vector<std::string> headers = {"P2P"};
  for (std::size_t b = 0; b < m.gpus.size(); ++b) headers.push_back(gpu_label(b));
  TextTable table(headers);
  for (std::size_t a = 0; a < m.gpus.size(); ++a) {
    std::vector<std::string> row = {gpu_label(a)};
    for (std::size_t b = 0; b < m.gpus.size(); ++b)
      row.push_back(a == b ? "X" : (m.peers[a][b].can_access_peer ? "yes" : "no"));
    table.add(row);
  }
  return table.render();
}

std::string gpu_lines(const MachineDiscovery& m) {
  TextTable table({"", "CUDA", "name", "PCI bus", "memory", "CC", "SMs", "catalog"});
  for (std::size_t a = 0; a < m.gpus.size(); ++a) {
    const DiscoveredGpu& g = m.gpus[a];
    table.add({gpu_label(a), std::to_string(g.device), g.name, g.pci_bus_id, format_size(g.memory),
               fmt::format("{}.{}", g.compute_capability / 10, g.compute_capability % 10), std::to_string(g.sm_count),
               g.catalog_gpu.empty() ? "none" : g.catalog_gpu});
  }
  return table.render();
}

std::string legend() {
  std::string text = "Legend:\n\n  X    = Self\n";
  for (PcieRelation r : {PcieRelation::kSystem, PcieRelation::kNumaNode, PcieRelation::kHostBridge,
                         PcieRelation::kMultipleBridges, PcieRelation::kSingleBridge}) {
    text += fmt::format("  {:<4} = {}\n", relation_code(r), relation_meaning(r));
  }
  text += "  NV#  = Connection traversing a bonded set of # NVLinks\n";
  text += "  ?    = Unknown: neither NVML nor sysfs describes the PCIe path\n";
  text += "  P2P  = cudaDeviceCanAccessPeer: the row GPU can address the column GPU's memory\n";
  return text;
}

}  // namespace

std::string format_topo_text(const MachineDiscovery& m, const RunContext& context) {
  std::string out = fmt::format("# commscale {} ({}) topo on {}: ", context.commscale_version, context.git_sha, m.host);
  if (m.gpus.empty()) {
    return out + fmt::format("no GPU\n# {}\n", m.no_gpu_reason.empty() ? "no GPU visible" : m.no_gpu_reason);
  }
  out += fmt::format("{} GPU{}; driver {}, CUDA {} (runtime {})\n", m.gpus.size(), m.gpus.size() == 1 ? "" : "s",
                     m.gpu_driver.empty() ? "unknown" : m.gpu_driver, m.cuda_driver, m.cuda_runtime);
  if (!m.nvml_status.empty()) {
    out += fmt::format("# NVML not used ({}): no NVLink information; PCIe links and paths from sysfs\n", m.nvml_status);
  }
  // One format call: GCC 12 at -O3 reports a false -Wrestrict on `"literal" + std::string&&`.
  out += fmt::format("\n{}\n{}\n{}\n{}", link_matrix(m), p2p_matrix(m), gpu_lines(m), legend());
  return out;
}

}  // namespace commscale

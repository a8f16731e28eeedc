#pragma once

// Machines as `commscale topo` would discover them, built by hand for the tests of the pure parts
// (matrix, topology file, line rates, reporters). Their PCI paths are sysfs's form: the root complex,
// the bridges, then the GPU.

#include <string>
#include <vector>

#include "hw/topo_matrix.hpp"
#include "hw/machine.hpp"

namespace commscale::testing {

inline DiscoveredGpu discovered_gpu(int device, const std::string& name, const std::string& bus, int numa,
                                    PcieLink pcie, std::vector<std::string> path, double memory_GiB) {
  DiscoveredGpu g;
  g.device = device;
  g.name = name;
  g.pci_bus_id = bus;
  g.uuid = "GPU-0000000" + std::to_string(device);
  g.memory = Bytes(static_cast<std::uint64_t>(memory_GiB * static_cast<double>(kGiB)));
  g.compute_capability = 90;
  g.sm_count = 132;
  g.numa_node = numa;
  g.pcie_max = pcie;
  g.pcie_current = pcie;
  g.pcie_source = "NVML";
  g.pci_path = std::move(path);
  return g;
}

// Adds `count` active links of `g` to `remote` (the far end's bus id, empty for a switch).
inline void add_nvlinks(DiscoveredGpu& g, int count, NvlinkRemote remote, const std::string& remote_bus) {
  for (int i = 0; i < count; ++i) {
    g.nvlinks.push_back({static_cast<int>(g.nvlinks.size()), true, remote, remote_bus});
  }
}

// Peer facts for every pair: access as given, the relation from the sysfs paths.
inline void fill_peers(MachineDiscovery& m, bool can_access) {
  const std::size_t n = m.gpus.size();
  m.peers.assign(n, std::vector<PeerFacts>(n));
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      PeerFacts& p = m.peers[a][b];
      p.can_access_peer = can_access;
      p.performance_rank = 0;
      p.relation =
          relation_from_pci_paths(m.gpus[a].pci_path, m.gpus[a].numa_node, m.gpus[b].pci_path, m.gpus[b].numa_node);
      p.relation_source = "sysfs";
    }
  }
}

inline MachineDiscovery machine_header() {
  MachineDiscovery m;
  m.host = "node01";
  m.gpu_driver = "580.159.03";
  m.cuda_driver = "13.0";
  m.cuda_runtime = "13.0";
  return m;
}

// The project's GPU machine: two H200 SXM joined by NV18, each on PCIe gen5 x16 under its own root
// port of one host bridge (PHB), NUMA node 0.
inline MachineDiscovery h200x2() {
  MachineDiscovery m = machine_header();
  const PcieLink gen5{5, 16};
  m.gpus.push_back(
      discovered_gpu(0, "NVIDIA H200", "0000:18:00.0", 0, gen5, {"pci0000:00", "0000:00:01.0", "0000:18:00.0"}, 139.8));
  m.gpus.push_back(
      discovered_gpu(1, "NVIDIA H200", "0000:2a:00.0", 0, gen5, {"pci0000:00", "0000:00:02.0", "0000:2a:00.0"}, 139.8));
  add_nvlinks(m.gpus[0], 18, NvlinkRemote::kGpu, "0000:2a:00.0");
  add_nvlinks(m.gpus[1], 18, NvlinkRemote::kGpu, "0000:18:00.0");
  m.gpus[0].nvlink_speed_MBps = m.gpus[1].nvlink_speed_MBps = 26562.5;
  fill_peers(m, true);
  m.peers[0][1].nvlink_p2p = m.peers[1][0].nvlink_p2p = true;
  return m;
}

inline MachineDiscovery h200x1() {
  MachineDiscovery m = machine_header();
  m.gpus.push_back(discovered_gpu(0, "NVIDIA H200", "0000:18:00.0", 0, {5, 16},
                                  {"pci0000:00", "0000:00:01.0", "0000:18:00.0"}, 139.8));
  fill_peers(m, true);
  return m;
}

// An HGX H100 baseboard: 8 GPUs with 18 links each to the NVSwitches; GPUs in pairs under four PCIe
// switches, two switches on each of two NUMA nodes (each on its own root complex).
inline MachineDiscovery hgx_h100() {
  MachineDiscovery m = machine_header();
  for (int g = 0; g < 8; ++g) {
    const int sw = g / 2;
    const std::string root = "pci0000:" + std::to_string(10 * sw);
    const std::string port = "0000:" + std::to_string(10 * sw) + ":01.0";
    const std::string upstream = "0000:" + std::to_string(10 * sw + 1) + ":00.0";
    const std::string downstream = "0000:" + std::to_string(10 * sw + 2) + ":0" + std::to_string(g % 2) + ".0";
    const std::string bus = "0000:" + std::to_string(10 * sw + 3 + g % 2) + ":00.0";
    m.gpus.push_back(discovered_gpu(g, "NVIDIA H100 80GB HBM3", bus, sw / 2, {5, 16},
                                    {root, port, upstream, downstream, bus}, 79.1));
    add_nvlinks(m.gpus.back(), 18, NvlinkRemote::kSwitch, "0000:c0:00.0");
  }
  fill_peers(m, true);
  return m;
}

// Two GeForce RTX 4090 on PCIe gen4 x16 on different NUMA nodes; the driver allows no P2P.
inline MachineDiscovery rtx4090x2() {
  MachineDiscovery m = machine_header();
  m.gpus.push_back(discovered_gpu(0, "NVIDIA GeForce RTX 4090", "0000:01:00.0", 0, {4, 16},
                                  {"pci0000:00", "0000:00:01.0", "0000:01:00.0"}, 23.6));
  m.gpus.push_back(discovered_gpu(1, "NVIDIA GeForce RTX 4090", "0000:81:00.0", 1, {4, 16},
                                  {"pci0000:80", "0000:80:01.0", "0000:81:00.0"}, 23.6));
  fill_peers(m, false);
  return m;
}

}  // namespace commscale::testing

#pragma once

// The discovered machine as a topology file (topologies/README.md, "clusters/NAME.json"), so that
// `commscale hw show`, `predict` and the link graph can use this very machine. Pure: built from a
// MachineDiscovery and the catalog's reference data, tested without a GPU.

#include <optional>
#include <string>
#include <string_view>

#include "hw/catalog.hpp"
#include "hw/cluster_spec.hpp"
#include "hw/machine.hpp"

namespace commscale {

// The catalog GPU (topologies/gpus/) a discovered device is: hw::match_gpu_name on its CUDA name
// ("NVIDIA H200" is h200-sxm), unless the name is a variant the catalog lacks (H200 NVL, RTX 3090 Ti,
// RTX 4090 D) or the device's memory is not the catalog part's (85% to 105% of it: an A100 PCIe 40GB
// is no a100-pcie-80gb). nullopt then: a wrong GPU would give the file wrong figures.
[[nodiscard]] std::optional<std::string> catalog_gpu_for(const DiscoveredGpu& gpu, const hw::Catalog& catalog);

// Sets catalog_gpu of every GPU of `m`.
void match_catalog_gpus(MachineDiscovery& m, const hw::Catalog& catalog);

struct TopologyRequest {
  std::string name;     // the cluster's name; the catalog wants the file's stem
  std::string file;     // where it will be written, for messages
  std::string gpu_ref;  // how the file names its GPU: a catalog name or a path relative to the file
  hw::GpuSpec gpu;      // what gpu_ref resolves to
  std::string date;     // "2026-12-01", for the layout's provenance
};

// The machine as one node: a cpu per NUMA node that has GPUs (one when sysfs gives none), a
// pcie_switch for each group of GPUs that share one (PIX or PXB), every GPU's PCIe link at its
// maximum generation and width, NVLink bundles between GPUs or to one nvswitch, and notes on what
// discovery cannot see (NICs, the switches' own uplinks, the bandwidth between sockets). Throws
// InputError naming --devices when the GPUs are of different models: a topology file has one.
[[nodiscard]] hw::ClusterSpec cluster_from_discovery(const MachineDiscovery& m, const TopologyRequest& request,
                                                     const hw::ReferenceData& ref);

}  // namespace commscale

#pragma once

// A cluster as topology files describe it (topologies/clusters/*.json): one node — its devices and the
// links between them — the transports NCCL may use inside it, and optionally the network that joins
// N such nodes. The node count is not in the file: LinkGraph::build takes it (--nodes N).

#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/collective.hpp"
#include "core/units.hpp"
#include "hw/figure.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/kinds.hpp"
#include "hw/reference.hpp"

namespace commscale::hw {

// A device of one node: "gpu3" is {kGpu, 3}.
struct DeviceRef {
  DeviceKind kind = DeviceKind::kGpu;
  int index = 0;
  bool operator==(const DeviceRef&) const = default;
};
[[nodiscard]] std::string device_name(DeviceRef d);  // "pcie_switch1"

// One full-duplex link between two devices of a node, as the file gives it and as resolved.
struct LinkSpec {
  DeviceRef a;
  DeviceRef b;  // equal to `a` only for a socket link (a loop on one CPU)
  LinkType type = LinkType::kPcie;
  int lanes = 0;                                 // NVLink: links in the bundle; PCIe: width
  int generation = 0;                            // PCIe generation (0 for other types)
  std::optional<Figure<GBps>> bw_given;          // "bw_GBps" when the file states it
  std::optional<Figure<Seconds>> latency_given;  // "latency_us" when the file states it
  std::string note;
  // Resolved at load: bw_given, else lanes x the GPU's NVLink link rate, else the PCIe table.
  Figure<GBps> bw;          // per direction
  Figure<Seconds> latency;  // one traversal; links.json's default for the type unless given

  bool operator==(const LinkSpec&) const = default;
};

struct NodeSpec {
  std::array<int, kDeviceKindCount> device_count{};  // by DeviceKind; net_switch is always 0
  std::optional<Figure<int>> nvswitch_chips;         // chips behind the nvswitch fabric device
  std::vector<LinkSpec> links;

  [[nodiscard]] int count(DeviceKind k) const noexcept { return device_count[static_cast<std::size_t>(k)]; }
  bool operator==(const NodeSpec&) const = default;
};

// Which NCCL transports may be used between GPUs of a node (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE).
struct Transports {
  bool p2p = true;               // P2P over NVLink and PCIe
  bool shm = true;               // staging through host memory
  std::optional<bool> pcie_p2p;  // overrides the GPU catalog's p2p_over_pcie (e.g. a patched driver);
                                 // true also lets P2P pass through CPUs (ClusterSpec::pcie_p2p_through_cpus)
  bool operator==(const Transports&) const = default;
};

// The network joining nodes: every NIC has one port of this rate to a non-blocking switch.
struct NetworkSpec {
  std::string technology;        // "InfiniBand HDR", "100 GbE RoCE"
  Figure<double> nic_rate_Gbps;  // line rate of one NIC port (Gb/s, 1e9 bits)
  // What NCCL was measured to move through one port each way where that stays below the line rate: no
  // GPUDirect RDMA (traffic bounced through host memory), or a fabric NCCL drives through another
  // stack (Omni-Path through IB verbs). The network links take the lower of the two.
  std::optional<Figure<double>> nccl_port_GBps;
  std::optional<Figure<Seconds>> latency_given;
  Figure<Seconds> latency;  // one NIC-to-switch traversal
  [[nodiscard]] GBps line_bw() const noexcept { return GBps(*nic_rate_Gbps.value / 8.0); }
  [[nodiscard]] GBps nic_bw() const noexcept {
    return nccl_port_GBps ? GBps(std::min(line_bw().value(), *nccl_port_GBps->value)) : line_bw();
  }
  bool operator==(const NetworkSpec&) const = default;
};

// A collective measured on the machine this cluster describes (tag M), kept beside the physical
// description for calibration; the link graph never uses it.
struct Measurement {
  Collective collective = Collective::kAllReduce;
  std::string size;  // as nccl-tests takes it: "4G"
  double busbw_GBps = 0.0;
  double algbw_GBps = 0.0;
  std::optional<double> time_1KiB_us;
  std::string env;  // "NCCL_P2P_DISABLE=1", or empty
  std::string source;
  bool operator==(const Measurement&) const = default;
};

struct ClusterSpec {
  std::string name;
  std::string description;
  std::string file;
  std::string gpu_ref;  // "gpu" as the file gives it: a catalog name or a path relative to the file
  GpuSpec gpu;
  Provenance layout;  // where the node's structure (devices and links) comes from
  NodeSpec node;
  Transports transports;
  std::optional<NetworkSpec> network;
  std::optional<Figure<double>> system_price_USD;       // one whole node (GPUs, host, NICs), as sold
  // A node priced from its parts when no system price is known (predict/economics.hpp): the host
  // (chassis, CPUs, memory, storage, power supplies), each NIC, and each NIC's port on the switch.
  std::optional<Figure<double>> host_price_USD;
  std::optional<Figure<double>> nic_price_USD;
  std::optional<Figure<double>> switch_port_price_USD;
  std::optional<Figure<double>> host_power_W;  // a node's power beside its GPUs' TDP
  // A node's host, for offloaded training (ZeRO-Offload): its memory (the offloaded states must fit), the
  // memory's bandwidth (CPU Adam streams its state: bytes / bandwidth) and its CPU cores (FLOPs / cores).
  std::optional<Figure<double>> host_memory_GiB;
  std::optional<Figure<double>> host_memory_bw_GBps;
  std::optional<Figure<double>> host_cpu_cores;
  std::vector<Measurement> measurements;
  std::vector<std::string> notes;
  // What what-if overrides changed beyond their keys (links dropped with node.gpus: override_devices.hpp);
  // not part of the file form. Predictions print them as notes.
  std::vector<std::string> what_if_notes;

  [[nodiscard]] int gpus_per_node() const noexcept { return node.count(DeviceKind::kGpu); }
  // Whether P2P over PCIe is allowed between this cluster's GPUs: transports.pcie_p2p, else the
  // catalog figure; an unknown catalog figure counts as no (NCCL falls back to host memory).
  [[nodiscard]] bool pcie_p2p_allowed() const noexcept;
  // Whether PCIe P2P may also pass through the CPUs' root complexes and between sockets (NCCL_P2P_LEVEL=SYS):
  // only where the cluster sets transports.pcie_p2p true itself, the case of a P2P-enabled driver on GPUs
  // under the CPUs' root ports (the runs of shared/VALIDATION.md); the catalog's p2p_over_pcie keeps NCCL's
  // default level (PXB: under PCIe switches only).
  [[nodiscard]] bool pcie_p2p_through_cpus() const noexcept { return transports.pcie_p2p.value_or(false); }
  bool operator==(const ClusterSpec&) const = default;
};

// Finds the GPU a cluster file names ("gpu": catalog name or path relative to the file).
using GpuResolver = std::function<GpuSpec(const std::string& ref, const std::string& where)>;

// Parses and validates a cluster file already read as JSON; `file` is the name used in messages.
[[nodiscard]] ClusterSpec parse_cluster(const nlohmann::json& json, const std::string& file, const ReferenceData& ref,
                                        const GpuResolver& resolve_gpu);
[[nodiscard]] ClusterSpec load_cluster_file(const std::filesystem::path& file, const ReferenceData& ref,
                                            const GpuResolver& resolve_gpu);
// The file form of a cluster, one entry per link (parse_cluster of it gives back the same spec).
[[nodiscard]] nlohmann::ordered_json cluster_to_json(const ClusterSpec& cluster);

// Checks what the parser cannot see key by key: link end kinds, NVLink lanes per GPU against the
// catalog, every GPU and NIC reaching a CPU over PCIe, a network when there are NICs. Throws InputError
// naming file:key. parse_cluster calls it; `topo` should call it before writing a file.
void validate_cluster(const ClusterSpec& cluster);

}  // namespace commscale::hw

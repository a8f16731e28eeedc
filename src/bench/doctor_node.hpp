#pragma once

// Doctor's per-node measurements, taken by the node's local rank 0: its network adapters (hwloc and
// sysfs, runtime/nic_discovery.hpp) and, on the GPU backend, `commscale p2p`'s copy-engine matrix
// between every pair of the GPUs it sees and its pinned host <-> GPU copies (bench/p2p.hpp), all
// verified. Rank 0 judges them against the link graph's figures.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/doctor_result.hpp"
#include "hw/nic.hpp"
#include "predict/doctor_expect.hpp"

namespace commscale {

// One direction of one copy: GPU to GPU, host to GPU or GPU to host (device -1 is host memory).
struct NodeCopy {
  int src_device = -1;
  int dst_device = -1;
  std::string src_bus;
  std::string dst_bus;
  std::string path;  // "P2P" or "staged: why"
  double GBps = 0.0;
  double cv = 0.0;  // of the samples
  std::uint64_t wrong_bytes = 0;
};

struct NodeMeasurement {
  std::string host;
  NicDiscovery nics;
  std::map<std::string, std::string> nearest_nic;  // GPU PCI bus id -> the NIC nearest it in the PCI tree
  std::string copies_status;                       // empty when the copies ran; else why not
  std::string copies_what;                         // sizes and sampling
  std::vector<NodeCopy> copies;
};

void to_json(nlohmann::json& out, const NodeMeasurement& m);
void from_json(const nlohmann::json& in, NodeMeasurement& m);

// On a node's local rank 0. `gpu_buses` are the PCI bus ids of the node's ranks' GPUs (for the
// nearest NIC); `gpu_backend`: run the copies.
[[nodiscard]] NodeMeasurement measure_node(const DoctorOptions& options, const std::string& host,
                                           const std::vector<std::string>& gpu_buses, bool gpu_backend);

// Rank 0: the checks of every node's NICs and copies. NIC rates are judged against the cluster's NIC
// (or --expect nic), else against the rate most of the job's RDMA ports run at.
[[nodiscard]] std::vector<predict::DoctorCheck> node_checks(const std::vector<NodeMeasurement>& nodes,
                                                            const predict::DoctorExpectations& expect,
                                                            double min_ratio);

}  // namespace commscale

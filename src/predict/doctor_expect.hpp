#pragma once

// What each thing `commscale doctor` checks should deliver, from a cluster description (a catalog
// cluster, or the machine as `topo` discovers it, NICs included) through the same link graph and
// collective model `predict` uses, and from what the user states with --expect. Every figure carries
// its basis, one phrase, which the check prints.
//
// Expectations are what a healthy machine delivers, so that one --min-ratio judges them all:
//   GEMM:       the catalog's dense rate for the type x kGemmFraction;
//   host copy:  the GPU's PCIe link (per direction, links.json) x kHostCopyFraction;
//   GPU pair:   the link graph's path between the two GPUs at NCCL's per-link figures (group_links.hpp),
//               which is what NCCL's transports sustain, copy engines included;
//   collective: the collective model's time for the group (its siblings running at once), as bus
//               bandwidth; a calibration profile's curve where it has one, or a measurement the catalog
//               cluster carries for exactly that collective, size and group;
//   NIC:        the cluster's NIC line rate; PCIe link: the cluster's generation and width;
//   NVLink:     the links the cluster gives the GPU.
// The model has no term for NCCL's channel limits on NVLink all-gather and reduce-scatter (measured
// 0.78-0.83 of it on 2 x H200, results/h200x2-2026-12-01), so those are shown against it, not judged.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/collective.hpp"
#include "core/dtype.hpp"
#include "hw/catalog.hpp"
#include "predict/calibration.hpp"
#include "predict/target.hpp"

namespace commscale::predict {

// bf16 8192^3 on the project's H200s, on operands like a model's: 1637-1692 us in calibrate (650-672
// TFLOP/s, results/h200x1-2026-12-03c), 1605-1621 us in PyTorch (685-678), 662 TFLOP/s in doctor's own
// GEMM (results/h200x1-2026-12-03e/run-23): 0.66-0.69 of the catalog's 989.5 dense. (The 783-811
// TFLOP/s of the first calibrations, 0.80, ran on NaN operands, which multiply 15% faster: a healthy
// H200 at 662 then read 0.84 of its expectation and failed doctor's 0.85.)
inline constexpr double kGemmFraction = 0.67;
// Pinned host <-> GPU copies on the project's H200 (PCIe gen5 x16): 55.4 GB/s each way, 0.865 of the
// 64 GB/s line rate, coefficient of variation 0.05% (results/h200x1-2026-12-01/topo-p2p/p2p.json).
inline constexpr double kHostCopyFraction = 0.85;

struct Expected {
  double value = 0.0;
  std::string basis;
  bool judged = true;  // false: shown beside the measurement, not judged (a figure known to be loose)
};

// The keys --expect takes, with their units, for messages and src/bench/DOCTOR.md.
struct StatedKey {
  std::string key;
  std::string unit;
  std::string meaning;
};
[[nodiscard]] const std::vector<StatedKey>& stated_keys();

class DoctorExpectations {
 public:
  // Only what --expect states (`stated`: key -> value in the key's unit); `why` says why there is no
  // cluster. `reference` (links.json, for PCIe rates) may be null when the catalog cannot be read.
  DoctorExpectations(std::map<std::string, double> stated, std::string why, const hw::ReferenceData* reference);
  // `cluster` for a job of `nodes` nodes of it (nodes above what the cluster allows: its network
  // figures are unavailable, and notes() says why). `source` says where the cluster came from.
  DoctorExpectations(const hw::Catalog& catalog, const hw::ClusterSpec& cluster, std::string source, int nodes,
                     std::shared_ptr<const CalibrationProfile> calibration, std::map<std::string, double> stated);

  [[nodiscard]] bool has_cluster() const noexcept { return node_ != nullptr; }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }
  void add_note(std::string note) { notes_.push_back(std::move(note)); }
  [[nodiscard]] int gpus_per_node() const noexcept;

  // The catalog GPU the cluster names, and whether the device's name is that GPU (hw/gpu_match.hpp).
  [[nodiscard]] std::optional<Expected> gpu_model(const std::string& device_name, bool* matches) const;
  [[nodiscard]] std::optional<Expected> gemm_TFLOPS(DataType type) const;
  // Per-direction bandwidth of a PCIe link (links.json); nullopt without reference data or for a
  // generation it does not list.
  [[nodiscard]] std::optional<double> pcie_GBps(int generation, int width) const;
  [[nodiscard]] std::optional<Expected> nvlink_links(int gpu) const;
  // The PCIe link the GPU should run at: value is generation x width, basis names both.
  [[nodiscard]] std::optional<Expected> pcie_link(int gpu, int* generation, int* width) const;
  [[nodiscard]] std::optional<Expected> host_copy_GBps(int gpu) const;
  [[nodiscard]] std::optional<Expected> p2p_copy_GBps(int gpu_a, int gpu_b) const;
  [[nodiscard]] std::optional<Expected> nic_rate_Gbps() const;
  // Bus bandwidth of `c` over each group (ranks of the cluster: node x G + GPU), the groups at once.
  // `key` is the --expect key that overrides it ("all_reduce", "node_all_reduce", "pair").
  [[nodiscard]] std::vector<std::optional<Expected>> collective_busbw(Collective c, Bytes bytes, DataType type,
                                                                      const std::vector<std::vector<int>>& groups,
                                                                      const std::string& key) const;

 private:
  [[nodiscard]] std::optional<Expected> stated(const std::string& key) const;
  [[nodiscard]] std::optional<Expected> measured_on_cluster(Collective c, Bytes bytes, int ranks) const;
  [[nodiscard]] const hw::LinkSpec* gpu_pcie(int gpu) const;

  std::map<std::string, double> stated_;
  std::optional<hw::ReferenceData> reference_;
  std::vector<std::string> catalog_gpus_;
  std::string source_;
  std::vector<std::string> notes_;
  std::unique_ptr<hw::ClusterSpec> node_;  // the cluster, whatever the job's node count
  std::unique_ptr<Target> target_;         // the cluster at the job's node count; null when it cannot be
  std::unique_ptr<Target> one_node_;       // one node of it, for the node's own checks
};

}  // namespace commscale::predict

#pragma once

// NCCL's own cost-model constants (src/graph/tuning.cc, NCCL 2.30.7, as shared/HARDWARE.md quotes
// them; units µs and GB/s), and the few protocol factors of the same function that HARDWARE.md does
// not quote (marked "tuning.cc" below). The predictor's collective model (comm_model.hpp) is NCCL's
// structure with these numbers; nothing here was fitted to a measurement.

#include <cstdint>
#include <string_view>

#include "hw/kinds.hpp"

namespace commscale::predict {

enum class NcclAlgo : std::uint8_t { kTree, kRing };
enum class NcclProto : std::uint8_t { kLL, kLL128, kSimple };
inline constexpr int kNcclProtoCount = 3;

[[nodiscard]] std::string_view name(NcclAlgo a) noexcept;   // tree ring
[[nodiscard]] std::string_view name(NcclProto p) noexcept;  // LL LL128 Simple

// NCCL's architecture index for its per-architecture tables: compute capability >= 10 Blackwell,
// >= 9 Hopper, >= 8 Ampere (Ada and GA10x included, as NCCL indexes them), else Volta.
enum class NcclArch : std::uint8_t { kVolta, kAmpere, kHopper, kBlackwell };

// A compute capability, "8.6" as {8, 6}; {0, 0} when the text does not parse.
struct ComputeCapability {
  int major = 0;
  int minor = 0;
};
[[nodiscard]] ComputeCapability parse_capability(std::string_view text) noexcept;
[[nodiscard]] NcclArch nccl_arch(int cc_major) noexcept;

// baseLatencies[algo][proto], µs (HARDWARE.md).
[[nodiscard]] double base_latency_us(NcclAlgo a, NcclProto p) noexcept;
// hwLat[hw][algo][proto], µs: the latency NCCL charges per step on a path of that class (HARDWARE.md).
[[nodiscard]] double hw_latency_us(hw::NcclHwClass c, NcclAlgo a, NcclProto p) noexcept;
// llMaxBws[arch][nodes: 1, 2, 3+], GB/s: the LL protocol's bandwidth ceiling (HARDWARE.md).
[[nodiscard]] double ll_max_bw_GBps(NcclArch arch, int nodes) noexcept;

// tuning.cc's protocol factors on a path's bus bandwidth:
//   ring LL: 1/4 for all-reduce, reduce or more than one node, else 1/3, capped at llMaxBw;
//   ring LL128: 0.92 with 2 or more GPUs per node, else 0.7;
//   tree (all-reduce) Simple 0.92, LL 1/3.8 capped at llMaxBw, LL128 7/9 on one node, 120/128 on more.
// The per-channel caps (perChMaxRingLL128Bw, perChMaxTreeBw) need NCCL's channel count, which this
// model does not derive; they bind only below ~4 channels and are left out.
[[nodiscard]] double ring_ll_factor(bool allreduce_like, int nodes) noexcept;
[[nodiscard]] double ring_ll128_factor(int ranks_per_node) noexcept;
[[nodiscard]] double tree_factor(NcclProto p, int nodes) noexcept;

// NCCL enables LL128 by default only on compute capability 7.0, 8.0, 9.0 and 10.0, and only where
// the GPUs of a node talk over NVLink (tuning.cc, "Enable LL128 by default only on
// Volta/Ampere/Hopper/Blackwell+NVLink").
[[nodiscard]] bool ll128_enabled(int cc_major, int cc_minor, bool intra_nvlink) noexcept;

// The per-link NVLink bandwidth NCCL assumes (HARDWARE.md): SM80 20.0, SM86 12.0, SM90 20.6,
// SM100 40.1 GB/s per direction. 0 for other architectures (the caller falls back to a ratio).
[[nodiscard]] double nccl_nvlink_bw_GBps(int cc_major, int cc_minor) noexcept;
// NCCL's PCIe bandwidth, width x speed / 80: 12, 24, 48 GB/s per direction for x16 gen3, 4, 5
// (HARDWARE.md), scaled by width / 16. 0 for a generation NCCL's table does not reach.
[[nodiscard]] double nccl_pcie_bw_GBps(int generation, int width) noexcept;

}  // namespace commscale::predict

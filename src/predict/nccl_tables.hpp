#pragma once

// NCCL's own cost-model constants (src/graph/tuning.cc, NCCL 2.30.7; units µs and GB/s): its tables
// (base and per-step latencies, llMaxBws, per-link bandwidths) and the factors, caps and thresholds
// of the same code, those beside the tables each marked "tuning.cc" or "enqueue.cc" below
// (2.28.3, the version the project's measurements ran, has the same values). The predictor's
// collective model (comm_model.hpp) is NCCL's structure with these numbers, plus the few terms that
// come from the project's own measurements (comm_measured.hpp).

#include <cstdint>
#include <string_view>

#include "core/units.hpp"
#include "hw/kinds.hpp"

namespace commscale::predict {

// Tree and ring as tuning.cc indexes them; kP2p is a send/receive, which NCCL's tuning model does not
// price (it picks the protocol by size, enqueue.cc): the model prices it with the ring's constants.
enum class NcclAlgo : std::uint8_t { kTree, kRing, kP2p };
enum class NcclProto : std::uint8_t { kLL, kLL128, kSimple };
inline constexpr int kNcclProtoCount = 3;

[[nodiscard]] std::string_view name(NcclAlgo a) noexcept;   // tree ring p2p
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

// baseLatencies[algo][proto], µs (tuning.cc); kP2p takes the ring's.
[[nodiscard]] double base_latency_us(NcclAlgo a, NcclProto p) noexcept;
// hwLat[hw][algo][proto], µs: the latency NCCL charges per step on a path of that class (tuning.cc);
// kP2p takes the ring's.
[[nodiscard]] double hw_latency_us(hw::NcclHwClass c, NcclAlgo a, NcclProto p) noexcept;
// llMaxBws, GB/s: the LL protocol's bandwidth ceiling (tuning.cc). tuning.cc indexes its rows by the
// GPU's architecture on one node and by the CPU's vendor across nodes ("for multi-node, we look at CPU
// type": row 0 Intel, row 1 AMD); the catalog does not say the vendor, so nodes > 1 take row 0, as
// NCCL does for any CPU that is not AMD. Columns: 1, 2, 3+ nodes.
[[nodiscard]] double ll_max_bw_GBps(NcclArch arch, int nodes) noexcept;

// tuning.cc's refinements of a path's bus bandwidth (busBw = nChannels x bw per channel):
//   ring LL:     busBw x 0.5, at most llMaxBw;
//   ring LL128:  busBw x 0.92 (at most nChannels x perChMaxRingLL128Bw);
//   tree (all-reduce): busBw x 0.92 (at most nChannels x perChMaxTreeBw), then LL x 1/3.8 at most
//                llMaxBw, LL128 x 7/9 on one node, x 120/128 on more (at most nChannels x perChMaxTreeLL128Bw).
// The per-channel caps need NCCL's channel count, which the link graph does not give: not applied.
inline constexpr double kRingLLFactor = 0.5;
inline constexpr double kLL128Factor = 0.92;
inline constexpr double kTreeFactor = 0.92;
[[nodiscard]] double tree_protocol_factor(NcclProto p, int nodes) noexcept;

// tuning.cc's treeCorrectionFactor[proto][log2(bytes / 64)], 64 B .. 256 MiB (1.0 outside): "trees are
// not perfectly sticking to the model for medium sizes"; it multiplies the tree's bandwidth.
[[nodiscard]] double tree_correction(NcclProto p, Bytes bytes) noexcept;

// tuning.cc, rings across nodes: "Inter-node rings still have to launch nsteps * net overhead": each
// step costs at least the network's post overhead, 1 µs (getNetOverhead: Intel and unknown CPUs; 2 on
// AMD), x 3 with Simple.
[[nodiscard]] double net_overhead_us(NcclProto p) noexcept;
// tuning.cc (ncclTopoGetAlgoTime), ring Simple all-reduce across nodes once each channel of each rank
// has 64 B or more: "Plateau effect of ring", latency x 1.4 from compute capability 8.0, x 1.9 below.
[[nodiscard]] double ring_plateau_factor(int cc_major) noexcept;
inline constexpr int kMaxChannels = 32;  // NCCL's MAXCHANNELS: the plateau test assumes every channel in use

// tuning.cc: LL128 is on by default from compute capability 7.0 where the GPUs of a node reach each
// other over NVLink (typeIntra <= PATH_NVB); its test of the NIC's PCIe path (PXN or PXB) is assumed met.
[[nodiscard]] bool ll128_enabled(int cc_major, bool intra_nvlink) noexcept;

// Send/receive (enqueue.cc, addP2pToPlan): LL while the bytes to one peer are at most
// NCCL_P2P_LL_THRESHOLD (16 KiB) x the channels per peer, else Simple; never LL128. Channels per peer
// (paths.cc, ncclTopoGetNchannels): 2 x the NVLink links between two GPUs of a node, else 2, made a
// power of two and at most NCCL's 32 channels.
inline constexpr std::uint64_t kP2pLLThresholdBytes = 16384;
[[nodiscard]] int p2p_channels(bool nvlink, int nvlink_links) noexcept;
[[nodiscard]] NcclProto p2p_protocol(Bytes bytes_per_peer, int channels) noexcept;

// The per-link NVLink bandwidth NCCL assumes (src/graph/topo.h): SM80 20.0, SM86 12.0, SM90 20.6,
// SM100 40.1 GB/s per direction. 0 for other architectures (the caller falls back to a ratio).
[[nodiscard]] double nccl_nvlink_bw_GBps(int cc_major, int cc_minor) noexcept;
// NCCL's PCIe bandwidth, width x speed / 80: 12, 24, 48 GB/s per direction for x16 gen3, 4, 5
// (src/graph/topo.cc), scaled by width / 16. 0 for a generation NCCL's table does not reach.
[[nodiscard]] double nccl_pcie_bw_GBps(int generation, int width) noexcept;

}  // namespace commscale::predict

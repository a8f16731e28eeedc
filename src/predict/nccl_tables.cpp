#include "predict/nccl_tables.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace commscale::predict {
namespace {

using Row = std::array<double, kNcclProtoCount>;  // LL, LL128, Simple

// [algo: tree, ring]
constexpr std::array<Row, 2> kBaseLatency = {Row{6.8, 14.0, 8.4}, Row{6.6, 14.0, 8.4}};

// [hw: NVLINK, PCI, NET][algo: tree, ring]
constexpr std::array<std::array<Row, 2>, 3> kHwLatency = {{
    {Row{0.6, 1.25, 4.0}, Row{0.6, 1.9, 3.4}},
    {Row{1.0, 1.9, 4.0}, Row{1.0, 2.5, 5.7}},
    {Row{5.0, 8.5, 14.0}, Row{2.7, 4.0, 14.0}},
}};

// [arch][nodes 1, 2, 3+]
constexpr std::array<std::array<double, 3>, 4> kLlMaxBw = {{
    {39.0, 39.0, 20.4},
    {87.7, 22.5, 19.0},
    {141.0, 45.0, 35.0},
    {282.0, 90.0, 70.0},
}};

// tuning.cc's treeCorrectionFactor for tree all-reduce, [proto][log2(bytes / 64)] (23 entries used).
constexpr std::size_t kTreeCorrectionSizes = 23;
constexpr std::array<std::array<double, kTreeCorrectionSizes>, kNcclProtoCount> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};

// kP2p is priced with the ring's constants.
std::size_t algo_index(NcclAlgo a) noexcept { return a == NcclAlgo::kTree ? 0 : 1; }

}  // namespace

std::string_view name(NcclAlgo a) noexcept {
  switch (a) {
    case NcclAlgo::kTree:
      return "tree";
    case NcclAlgo::kRing:
      return "ring";
    case NcclAlgo::kP2p:
      return "p2p";
  }
  return "?";
}

std::string_view name(NcclProto p) noexcept {
  switch (p) {
    case NcclProto::kLL:
      return "LL";
    case NcclProto::kLL128:
      return "LL128";
    case NcclProto::kSimple:
      return "Simple";
  }
  return "?";
}

ComputeCapability parse_capability(std::string_view text) noexcept {
  ComputeCapability cc;
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return cc;
  const auto digits = [](std::string_view s, int* out) {
    if (s.empty() || s.size() > 3) return false;
    int v = 0;
    for (const char ch : s) {
      if (ch < '0' || ch > '9') return false;
      v = v * 10 + (ch - '0');
    }
    *out = v;
    return true;
  };
  ComputeCapability parsed;
  if (digits(text.substr(0, dot), &parsed.major) && digits(text.substr(dot + 1), &parsed.minor)) cc = parsed;
  return cc;
}

NcclArch nccl_arch(int cc_major) noexcept {
  if (cc_major >= 10) return NcclArch::kBlackwell;
  if (cc_major >= 9) return NcclArch::kHopper;
  if (cc_major >= 8) return NcclArch::kAmpere;
  return NcclArch::kVolta;
}

double base_latency_us(NcclAlgo a, NcclProto p) noexcept {
  return kBaseLatency[algo_index(a)][static_cast<std::size_t>(p)];
}

double hw_latency_us(hw::NcclHwClass c, NcclAlgo a, NcclProto p) noexcept {
  return kHwLatency[static_cast<std::size_t>(c)][algo_index(a)][static_cast<std::size_t>(p)];
}

double ll_max_bw_GBps(NcclArch arch, int nodes) noexcept {
  if (nodes <= 1) return kLlMaxBw[static_cast<std::size_t>(arch)][0];
  return kLlMaxBw[0][nodes == 2 ? 1 : 2];
}

double tree_protocol_factor(NcclProto p, int nodes) noexcept {
  switch (p) {
    case NcclProto::kLL:
      return 1.0 / 3.8;
    case NcclProto::kLL128:
      return nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    case NcclProto::kSimple:
      return 1.0;
  }
  return 1.0;
}

double tree_correction(NcclProto p, Bytes bytes) noexcept {
  const std::uint64_t units = bytes.count() >> 6;
  if (units == 0) return 1.0;
  const auto index = static_cast<std::size_t>(std::bit_width(units) - 1);
  return index < kTreeCorrectionSizes ? kTreeCorrection[static_cast<std::size_t>(p)][index] : 1.0;
}

double net_overhead_us(NcclProto p) noexcept { return p == NcclProto::kSimple ? 3.0 : 1.0; }

double ring_plateau_factor(int cc_major) noexcept { return cc_major >= 8 ? 1.4 : 1.9; }

bool ll128_enabled(int cc_major, bool intra_nvlink) noexcept { return intra_nvlink && cc_major >= 7; }

int p2p_channels(bool nvlink, int nvlink_links) noexcept {
  const int wanted = nvlink ? 2 * std::max(1, nvlink_links) : 2;
  return static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::min(wanted, kMaxChannels))));
}

NcclProto p2p_protocol(Bytes bytes_per_peer, int channels) noexcept {
  return bytes_per_peer.count() <= kP2pLLThresholdBytes * static_cast<std::uint64_t>(channels) ? NcclProto::kLL
                                                                                               : NcclProto::kSimple;
}

double nccl_nvlink_bw_GBps(int cc_major, int cc_minor) noexcept {
  const int cc = cc_major * 10 + cc_minor;
  switch (cc) {
    case 80:
      return 20.0;
    case 86:
      return 12.0;
    case 90:
      return 20.6;
    case 100:
      return 40.1;
    default:
      return 0.0;
  }
}

double nccl_pcie_bw_GBps(int generation, int width) noexcept {
  double x16 = 0.0;
  if (generation == 3) x16 = 12.0;
  if (generation == 4) x16 = 24.0;
  if (generation == 5) x16 = 48.0;
  return x16 * width / 16.0;
}

}  // namespace commscale::predict

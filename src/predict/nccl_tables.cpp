#include "predict/nccl_tables.hpp"

#include <array>

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

}  // namespace

std::string_view name(NcclAlgo a) noexcept { return a == NcclAlgo::kTree ? "tree" : "ring"; }

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
  return kBaseLatency[static_cast<std::size_t>(a)][static_cast<std::size_t>(p)];
}

double hw_latency_us(hw::NcclHwClass c, NcclAlgo a, NcclProto p) noexcept {
  return kHwLatency[static_cast<std::size_t>(c)][static_cast<std::size_t>(a)][static_cast<std::size_t>(p)];
}

double ll_max_bw_GBps(NcclArch arch, int nodes) noexcept {
  const std::size_t column = nodes <= 1 ? 0 : (nodes == 2 ? 1 : 2);
  return kLlMaxBw[static_cast<std::size_t>(arch)][column];
}

double ring_ll_factor(bool allreduce_like, int nodes) noexcept {
  return (nodes > 1 || allreduce_like) ? 1.0 / 4.0 : 1.0 / 3.0;
}

double ring_ll128_factor(int ranks_per_node) noexcept { return ranks_per_node < 2 ? 0.7 : 0.92; }

double tree_factor(NcclProto p, int nodes) noexcept {
  switch (p) {
    case NcclProto::kLL:
      return 1.0 / 3.8;
    case NcclProto::kLL128:
      return nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    case NcclProto::kSimple:
      return 0.92;
  }
  return 1.0;
}

bool ll128_enabled(int cc_major, int cc_minor, bool intra_nvlink) noexcept {
  const int cc = cc_major * 10 + cc_minor;
  return intra_nvlink && (cc == 70 || cc == 80 || cc == 90 || cc == 100);
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

#include "predict/comm_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace commscale::predict {
namespace {

constexpr std::array kProtos = {NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple};

hw::NcclHwClass hw_class(hw::PathClass c) { return hw::nccl_hw_class(c); }

// time = latency + bytes / algbw, with its latency term.
CommEstimate estimate(double latency_us, Bytes bytes, double algbw_GBps, NcclAlgo a, NcclProto p) {
  return {microseconds(latency_us) + Seconds(static_cast<double>(bytes.count()) / (algbw_GBps * kGB)),
          microseconds(latency_us), a, p, false};
}

void keep_fastest(CommEstimate& best, const CommEstimate& candidate) {
  if (candidate.time < best.time) best = candidate;
}

CommEstimate unset() {
  CommEstimate e;
  e.time = Seconds(std::numeric_limits<double>::infinity());
  return e;
}

}  // namespace

CommModel::CommModel(ComputeCapability cc, const std::string& gpu_name, const CalibrationProfile* calibration)
    : cc_(cc), arch_(nccl_arch(cc.major)) {
  if (calibration != nullptr && calibration->gpu.name == gpu_name) calibration_ = calibration;
}

CommEstimate CommModel::ring(Collective c, Bytes bytes, const GroupLinks& g) const {
  const int n = g.ranks;
  const bool allreduce = c == Collective::kAllReduce;
  const bool gather_scatter = c == Collective::kAllGather || c == Collective::kReduceScatter;
  const int nsteps = allreduce ? 2 * (n - 1) : n - 1;
  const double ratio = allreduce ? n / (2.0 * (n - 1)) : (gather_scatter ? n / static_cast<double>(n - 1) : 1.0);
  const int inter = g.nodes > 1 ? (allreduce ? 2 * (g.nodes - 1) : g.nodes - 1) : 0;
  const int intra = std::max(0, nsteps - inter);
  const double bus = g.bus_bw().value();
  CommEstimate best = unset();
  for (const NcclProto p : kProtos) {
    if (p == NcclProto::kLL128 && !ll128_enabled(cc_.major, cc_.minor, g.intra_nvlink)) continue;
    double bw = bus;
    if (p == NcclProto::kLL) {
      bw = std::min(bus * ring_ll_factor(allreduce || c == Collective::kReduce, g.nodes),
                    ll_max_bw_GBps(arch_, g.nodes));
    } else if (p == NcclProto::kLL128) {
      bw = bus * ring_ll128_factor(g.local);
    }
    const double intra_lat =
        std::max(hw_latency_us(hw_class(g.intra_class), NcclAlgo::kRing, p), to_us(g.intra_latency));
    const double net_lat = std::max(hw_latency_us(hw::NcclHwClass::kNet, NcclAlgo::kRing, p), to_us(g.inter_latency));
    const double latency = base_latency_us(NcclAlgo::kRing, p) + intra * intra_lat + inter * net_lat;
    keep_fastest(best, estimate(latency, bytes, bw * ratio, NcclAlgo::kRing, p));
  }
  return best;
}

CommEstimate CommModel::tree(Bytes bytes, const GroupLinks& g) const {
  const double bus = g.bus_bw().value();
  const double levels = g.nodes > 1 ? std::ceil(std::log2(static_cast<double>(g.nodes))) : 0.0;
  CommEstimate best = unset();
  for (const NcclProto p : kProtos) {
    if (p == NcclProto::kLL128 && !ll128_enabled(cc_.major, cc_.minor, g.intra_nvlink)) continue;
    double bw = bus * tree_factor(p, g.nodes);
    if (p == NcclProto::kLL) bw = std::min(bw, ll_max_bw_GBps(arch_, g.nodes));
    const double intra_lat =
        std::max(hw_latency_us(hw_class(g.intra_class), NcclAlgo::kTree, p), to_us(g.intra_latency));
    const double net_lat = std::max(hw_latency_us(hw::NcclHwClass::kNet, NcclAlgo::kTree, p), to_us(g.inter_latency));
    const double latency = base_latency_us(NcclAlgo::kTree, p) + 2.0 * ((g.local - 1) * intra_lat + levels * net_lat);
    keep_fastest(best, estimate(latency, bytes, bw * 0.5, NcclAlgo::kTree, p));
  }
  return best;
}

CommEstimate CommModel::one_step(Bytes bytes, const FlowLinks& flow, int nodes) const {
  CommEstimate best = unset();
  const bool nvlink = flow.path_class == hw::PathClass::kNvlink;
  for (const NcclProto p : kProtos) {
    if (p == NcclProto::kLL128 && !ll128_enabled(cc_.major, cc_.minor, nvlink)) continue;
    double bw = flow.bw.value();
    if (p == NcclProto::kLL) bw = std::min(bw / 3.0, ll_max_bw_GBps(arch_, nodes));
    if (p == NcclProto::kLL128) bw *= ring_ll128_factor(2);
    const double hop = std::max(hw_latency_us(hw_class(flow.path_class), NcclAlgo::kRing, p), to_us(flow.latency));
    keep_fastest(best, estimate(base_latency_us(NcclAlgo::kRing, p) + hop, bytes, bw, NcclAlgo::kRing, p));
  }
  return best;
}

CommEstimate CommModel::collective(Collective c, Bytes bytes, const GroupLinks& g, const FlowLinks* all_to_all) const {
  if (g.ranks <= 1) return {};
  if (calibration_ != nullptr) {
    if (const CollectiveCurve* curve = find_curve(*calibration_, c, g.ranks, g.nodes, g.bottleneck_class())) {
      // The curve was measured with the group alone; siblings sharing its links slow it down.
      const double sharing = std::max(1.0, g.alone_bw.value() / g.bus_bw().value());
      return {curve_time(*curve, bytes) * sharing, Seconds(0.0), NcclAlgo::kRing, NcclProto::kSimple, true};
    }
  }
  const FlowLinks whole{g.bottleneck_class(), g.bus_bw(), std::max(g.intra_latency, g.inter_latency)};
  switch (c) {
    case Collective::kAllReduce: {
      CommEstimate best = ring(c, bytes, g);
      keep_fastest(best, tree(bytes, g));
      return best;
    }
    case Collective::kAllToAll:
      return one_step(bytes / static_cast<std::uint64_t>(g.ranks), all_to_all != nullptr ? *all_to_all : whole,
                      g.nodes);
    case Collective::kSendRecv:
      return one_step(bytes, whole, g.nodes);
    default:
      return ring(c, bytes, g);
  }
}

CommEstimate CommModel::point_to_point(Bytes bytes, const FlowLinks& flow) const {
  return one_step(bytes, flow, flow.path_class == hw::PathClass::kNetwork ? 2 : 1);
}

GBps CommModel::bus_bandwidth(Collective c, Bytes bytes, DataType dtype, int ranks, Seconds time) {
  const CollectiveLayout layout = collective_layout(c, bytes, dtype, ranks, 0);
  return collective_bandwidths(layout, time).busbw;
}

}  // namespace commscale::predict

#include "predict/comm_model.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include "predict/comm_measured.hpp"
#include "predict/comm_network.hpp"

namespace commscale::predict {
namespace {

constexpr std::array kProtos = {NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple};

// NCCL's class for the steps inside a node (tuning.cc: typeIntra == LINK_NVL ? NVLINK : PCI).
hw::NcclHwClass intra_hw(const GroupLinks& g) { return g.intra_nvlink ? hw::NcclHwClass::kNvlink : hw::NcclHwClass::kPci; }

// The link graph's path latency counts only where NCCL's tables do not describe the path: through host
// memory and through the socket transport (links.json holds their measured steps).
bool path_latency_counts(hw::PathClass c) { return c == hw::PathClass::kHostStaged || c == hw::PathClass::kSocket; }

// A ring protocol's share of the bus bandwidth (tuning.cc).
double ring_bw(NcclProto p, double bus, double ll_max) {
  switch (p) {
    case NcclProto::kLL:
      return std::min(bus * kRingLLFactor, ll_max);
    case NcclProto::kLL128:
      return bus * kLL128Factor;
    case NcclProto::kSimple:
      return bus;
  }
  return bus;
}

double us_to_move(Bytes bytes, double GBps) { return static_cast<double>(bytes.count()) / (GBps * 1e3); }

Bytes bus_bytes_of(Collective c, Bytes bytes, int ranks) {
  return Bytes(static_cast<std::uint64_t>(static_cast<double>(bytes.count()) * busbw_factor(c, ranks)));
}

// The share of the bus bandwidth a group reaches when the network limits it (comm_network.hpp).
double network_ramp(const GroupLinks& g, Bytes bytes, NcclProto p) {
  if (g.bottleneck_class() != hw::PathClass::kNetwork) return 1.0;
  return network_size_efficiency(bytes, g.nodes, p, g.bus_bw().value());
}

}  // namespace

void CommModel::keep(Choice& best, double nccl_us, double latency_us, double time_us, NcclAlgo a, NcclProto p) {
  if (nccl_us < best.nccl_us) best = {nccl_us, {microseconds(time_us), microseconds(latency_us), a, p, false}};
}

CommModel::CommModel(ComputeCapability cc, const std::string& gpu_name, const CalibrationProfile* calibration,
                     CommOptions options)
    : cc_(cc), arch_(nccl_arch(cc.major)), options_(options) {
  if (calibration != nullptr && calibration->gpu.name == gpu_name) calibration_ = calibration;
}

CommModel::StepLatency CommModel::intra_step(const GroupLinks& g, NcclAlgo a, NcclProto p) const {
  const double nccl = hw_latency_us(intra_hw(g), a, p);
  return {nccl, path_latency_counts(g.intra_class) ? std::max(nccl, to_us(g.intra_latency)) : nccl};
}

CommModel::StepLatency CommModel::inter_step(const GroupLinks& g, NcclAlgo a, NcclProto p) const {
  // tuning.cc: "With ppn=1 latencies are fully exposed, use the Tree network latency".
  const double nccl = hw_latency_us(hw::NcclHwClass::kNet, g.local == 1 ? NcclAlgo::kTree : a, p);
  return {nccl, options_.network_latency_given ? std::max(nccl, to_us(g.inter_latency)) : nccl};
}

double CommModel::transfer_us(NcclProto p, hw::PathClass bottleneck, Bytes bytes, Bytes bus_bytes, double algbw_GBps) {
  if (p == NcclProto::kSimple && bottleneck == hw::PathClass::kNvlink) {
    return us_to_move(bytes, algbw_GBps * kNvlinkSimpleEfficiency) +
           kNvlinkSimpleRampUsPerSqrtByte * std::sqrt(static_cast<double>(bus_bytes.count()));
  }
  return us_to_move(bytes, algbw_GBps);
}

CommModel::Choice CommModel::ring(Collective c, Bytes bytes, const GroupLinks& g) const {
  const int n = g.ranks;
  const bool allreduce = c == Collective::kAllReduce;
  const int rounds = traits(c).ring_rounds;
  const int nsteps = rounds * (n - 1);
  const double ratio = algbw_per_busbw(c, n);
  const int inter = g.nodes > 1 ? rounds * (g.nodes - 1) : 0;
  const int intra = std::max(0, nsteps - inter);
  const double ll_max = ll_max_bw_GBps(arch_, g.nodes);
  const Bytes bus_bytes = bus_bytes_of(c, bytes, n);
  // tuning.cc's plateau: each rank's share on each of (at most) 32 channels is 64 B or more.
  const bool plateau = allreduce && g.nodes > 1 && bytes.count() / (kMaxChannels * static_cast<std::uint64_t>(n)) >= 64;
  Choice best;
  for (const NcclProto p : kProtos) {
    if (p == NcclProto::kLL128 && !ll128_enabled(cc_.major, g.intra_nvlink)) continue;
    StepLatency in = intra_step(g, NcclAlgo::kRing, p);
    if (g.nodes > 1) {  // tuning.cc: "Inter-node rings still have to launch nsteps * net overhead"
      in = {std::max(in.nccl, net_overhead_us(p)), std::max(in.model, net_overhead_us(p))};
    }
    const StepLatency out = inter_step(g, NcclAlgo::kRing, p);
    const double scale = p == NcclProto::kSimple && plateau ? ring_plateau_factor(cc_.major) : 1.0;
    const double base = base_latency_us(NcclAlgo::kRing, p);
    const double nccl_latency = (base + intra * in.nccl + inter * out.nccl) * scale;
    const double latency = (base + intra * in.model + inter * out.model) * scale;
    const double nccl_us = nccl_latency + us_to_move(bytes, ring_bw(p, g.nccl_bw.value(), ll_max) * ratio);
    const double algbw = ring_bw(p, g.bus_bw().value(), ll_max) * ratio * network_ramp(g, bytes, p);
    const double time_us = latency + transfer_us(p, g.bottleneck_class(), bytes, bus_bytes, algbw);
    keep(best, nccl_us, latency, time_us, NcclAlgo::kRing, p);
  }
  return best;
}

CommModel::Choice CommModel::tree(Bytes bytes, const GroupLinks& g) const {
  const auto levels = static_cast<double>(std::bit_width(static_cast<unsigned>(g.nodes)) - 1);  // log2i
  const double ll_max = ll_max_bw_GBps(arch_, g.nodes);
  Choice best;
  for (const NcclProto p : kProtos) {
    if (p == NcclProto::kLL128 && !ll128_enabled(cc_.major, g.intra_nvlink)) continue;
    const auto algbw = [&](double bus) {
      double bw = bus * kTreeFactor * tree_protocol_factor(p, g.nodes);
      if (p == NcclProto::kLL) bw = std::min(bw, ll_max);
      return bw * tree_correction(p, bytes) * 0.5;
    };
    const StepLatency in = intra_step(g, NcclAlgo::kTree, p);
    const StepLatency out = inter_step(g, NcclAlgo::kTree, p);
    const double base = base_latency_us(NcclAlgo::kTree, p);
    const double nccl_latency = base + 2.0 * ((g.local - 1) * in.nccl + levels * out.nccl);
    const double latency = base + 2.0 * ((g.local - 1) * in.model + levels * out.model);
    keep(best, nccl_latency + us_to_move(bytes, algbw(g.nccl_bw.value())), latency,
         latency + us_to_move(bytes, algbw(g.bus_bw().value()) * network_ramp(g, bytes, p)), NcclAlgo::kTree, p);
  }
  return best;
}

CommEstimate CommModel::one_step(Bytes bytes, Bytes bus_bytes, const FlowLinks& flow, int nodes) const {
  const NcclProto p = p2p_protocol(bytes, flow.p2p_channels);
  double step = 0.0;
  if (flow.path_class == hw::PathClass::kNetwork) {
    step = hw_latency_us(hw::NcclHwClass::kNet, NcclAlgo::kP2p, p);
    if (options_.network_latency_given) step = std::max(step, to_us(flow.latency));
  } else {
    step = hw_latency_us(flow.path_class == hw::PathClass::kNvlink ? hw::NcclHwClass::kNvlink : hw::NcclHwClass::kPci,
                         NcclAlgo::kP2p, p);
    if (path_latency_counts(flow.path_class)) step = std::max(step, to_us(flow.latency));
  }
  const double latency = base_latency_us(NcclAlgo::kP2p, p) + (p == NcclProto::kLL ? kP2pLLHops : kP2pSimpleHops) * step;
  double bw = flow.bw.value();
  if (p == NcclProto::kLL) bw = std::min(bw * kRingLLFactor, ll_max_bw_GBps(arch_, nodes));
  const double time_us = latency + transfer_us(p, flow.path_class, bytes, bus_bytes, bw);
  return {microseconds(time_us), microseconds(latency), NcclAlgo::kP2p, p, false};
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
  const FlowLinks whole{g.bottleneck_class(), g.bus_bw(), std::max(g.intra_latency, g.inter_latency), g.p2p_channels};
  switch (c) {
    case Collective::kAllReduce: {
      Choice best = ring(c, bytes, g);
      const Choice by_tree = tree(bytes, g);
      if (by_tree.nccl_us < best.nccl_us) best = by_tree;
      return best.estimate;
    }
    case Collective::kAllToAll:
      return one_step(bytes / static_cast<std::uint64_t>(g.ranks), bus_bytes_of(c, bytes, g.ranks),
                      all_to_all != nullptr ? *all_to_all : whole, g.nodes);
    case Collective::kSendRecv:
      return one_step(bytes, bytes, whole, g.nodes);
    default:
      return ring(c, bytes, g).estimate;
  }
}

CommEstimate CommModel::point_to_point(Bytes bytes, const FlowLinks& flow) const {
  return one_step(bytes, bytes, flow, flow.path_class == hw::PathClass::kNetwork ? 2 : 1);
}

GBps CommModel::bus_bandwidth(Collective c, Bytes bytes, DataType dtype, int ranks, Seconds time) {
  const CollectiveLayout layout = collective_layout(c, bytes, dtype, ranks, 0);
  return collective_bandwidths(layout, time).busbw;
}

}  // namespace commscale::predict

#pragma once

// Time of collectives and point-to-point transfers, in NCCL's own structure (src/graph/tuning.cc,
// constants in nccl_tables.hpp): for each algorithm (ring; tree for all-reduce) and protocol (LL,
// LL128, Simple) NCCL would allow,
//   time = latency + bytes / algbw,   algbw = bus bandwidth x protocol factor x algorithm ratio.
// NCCL runs the combination its own estimate finds fastest; the model picks the same way, with NCCL's
// view of the group (nccl_bw: NCCL's per-link figures, the group alone; NCCL's latencies), and then
// prices that choice with what the link graph and the measurements say (the bandwidth the group gets
// beside its siblings, the host-staged efficiency, measured step latencies, comm_measured.hpp).
//
// Bus bandwidth: group_links.hpp. Ratio: ring n / nsteps (nsteps 2(n-1) all-reduce, n-1 all-gather
// and reduce-scatter, ratio 1 for broadcast and reduce), tree 0.5. Latency:
//   ring: base + (nsteps - inter) x intra + inter x net,   inter = 2(N-1) all-reduce, N-1 others;
//   tree: base + 2 ((L-1) x intra + floor(log2 N) x net)    (N nodes, L ranks per node),
// intra and net the per-step latencies of one hop inside a node and between nodes:
//   NVLink, PCIe P2P:   NCCL's hwLat of the class (NVLINK, PCI): NCCL's per-step figures are for
//                       these paths, and the link graph's per-link placeholders (links.json, U) are not
//                       added to them;
//   host-staged, socket: the larger of NCCL's PCI hwLat (the class NCCL's tuning gives any intra-node
//                       path that is not NVLink) and the link graph's path latency, which links.json
//                       sets from the measured steps (2.09 us host-staged, 10.3 us sockets);
//   between nodes:      NCCL's NET hwLat (tree's with one rank per node, as tuning.cc), or the link
//                       graph's path latency where the cluster file gives its network latency_us and
//                       that is larger; rings across nodes charge every step at least NCCL's network
//                       post overhead (1 us, 3 us Simple), and ring Simple all-reduce across nodes x 1.4
//                       (x 1.9 before SM80), tuning.cc's "plateau effect".
// Where the network limits the group, the model (not NCCL's estimate) prices its bandwidth at the
// size ramp of comm_network.hpp: (bytes / N) / (bytes / N + net overhead x bus bandwidth).
// Tree bandwidth takes tuning.cc's per-size correction factors. Over NVLink the Simple protocol runs
// at a measured efficiency with a measured size ramp (comm_measured.hpp).
// `bytes` is the nccl-tests size (op.hpp), which is NCCL's nBytes.
//
// Point-to-point (send/recv, all-to-all and pipeline transfers): NCCL picks LL up to 16 KiB per
// channel per peer, else Simple (nccl_tables.hpp); latency base + hops x step (LL two hops, Simple
// one: measured, comm_measured.hpp); bandwidth the path's (x 0.5 with LL, at most llMaxBw). Bus
// bandwidths reported use core/collective.hpp, the definitions `bench` uses.
//
// Not modelled: NVLS, CollNet and PAT algorithms (NVLS is what NCCL runs for all-reduce on NVSwitch
// H100/H200 when enabled), NCCL's per-channel bandwidth caps (they need its channel count), and the
// socket transport's extra cost at 8 KiB - 1 MiB (measured 1.3-2.6 x the model:
// results/collective-latency/).

#include <limits>
#include <string>

#include "core/collective.hpp"
#include "core/units.hpp"
#include "predict/calibration.hpp"
#include "predict/group_links.hpp"
#include "predict/nccl_tables.hpp"

namespace commscale::predict {

struct CommEstimate {
  Seconds time;
  Seconds latency;  // the latency term of `time` (the rest moves the bytes)
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kSimple;
  bool calibrated = false;  // from a calibration curve
};

struct CommOptions {
  // The cluster file gives its network's latency (a measured figure, say): steps between nodes take
  // the link graph's latency where it is above NCCL's.
  bool network_latency_given = false;
};

class CommModel {
 public:
  // `calibration` may be null; its collective curves are used only when `gpu_name` is its GPU.
  CommModel(ComputeCapability cc, const std::string& gpu_name, const CalibrationProfile* calibration,
            CommOptions options = {});

  // A collective of `bytes` (nccl-tests size) over a group. `all_to_all` gives the slowest flow of the
  // group's all-to-all (needed for kAllToAll only). One rank: no time.
  [[nodiscard]] CommEstimate collective(Collective c, Bytes bytes, const GroupLinks& group,
                                        const FlowLinks* all_to_all = nullptr) const;
  [[nodiscard]] CommEstimate point_to_point(Bytes bytes, const FlowLinks& flow) const;

  // Bus bandwidth of a collective that took `time`, as `bench` reports it.
  [[nodiscard]] static GBps bus_bandwidth(Collective c, Bytes bytes, DataType dtype, int ranks, Seconds time);

 private:
  struct StepLatency {  // µs per step, NCCL's view and the model's
    double nccl;
    double model;
  };
  [[nodiscard]] StepLatency intra_step(const GroupLinks& g, NcclAlgo a, NcclProto p) const;
  [[nodiscard]] StepLatency inter_step(const GroupLinks& g, NcclAlgo a, NcclProto p) const;
  // A candidate as NCCL's estimate ranks it (nccl_us) and as the model prices it.
  struct Choice {
    double nccl_us = std::numeric_limits<double>::infinity();
    CommEstimate estimate;
  };
  static void keep(Choice& best, double nccl_us, double latency_us, double time_us, NcclAlgo a, NcclProto p);
  [[nodiscard]] Choice ring(Collective c, Bytes bytes, const GroupLinks& g) const;
  [[nodiscard]] Choice tree(Bytes bytes, const GroupLinks& g) const;
  [[nodiscard]] CommEstimate one_step(Bytes bytes, Bytes bus_bytes, const FlowLinks& flow, int nodes) const;
  // Seconds to move `bytes` at `algbw_GBps` with protocol p over the group's bottleneck class: NVLink
  // Simple at the measured efficiency and ramp (bus_bytes: the traffic per link).
  [[nodiscard]] static double transfer_us(NcclProto p, hw::PathClass bottleneck, Bytes bytes, Bytes bus_bytes,
                                          double algbw_GBps);

  ComputeCapability cc_;
  NcclArch arch_;
  const CalibrationProfile* calibration_ = nullptr;
  CommOptions options_;
};

}  // namespace commscale::predict

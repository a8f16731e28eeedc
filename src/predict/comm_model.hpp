#pragma once

// Time of collectives and point-to-point transfers, in NCCL's own structure (src/graph/tuning.cc):
// for each algorithm (ring; tree for all-reduce) and protocol (LL, LL128, Simple) NCCL would allow,
//   time = latency + bytes / algbw,
//   algbw = bus bandwidth x protocol factor x algorithm ratio,
// and the fastest combination is the one NCCL picks. Bus bandwidth comes from the link graph
// (group_links.hpp: the ring's narrowest share of NCCL's per-link figures, with the sibling groups'
// load). Ratio: ring n / nsteps (nsteps 2(n-1) all-reduce, n-1 all-gather and reduce-scatter, ratio 1
// for broadcast and reduce), tree 0.5. Latency:
//   ring: base[ring][p] + (nsteps - inter) x intra + inter x net, inter = 2(N-1) all-reduce, N-1 others;
//   tree: base[tree][p] + 2 ((L-1) x intra + ceil(log2 N) x net)   (N nodes, L ranks per node),
// where intra = max(hwLat[class of the intra-node hops][algo][p], the link graph's hop latency) and net
// likewise with NCCL's NET class. `bytes` is the nccl-tests size (op.hpp), which is NCCL's nBytes.
// Point-to-point (send/recv) and all-to-all: one step, base[ring][p] + max(hwLat, path latency) +
// bytes per peer / (path bandwidth x protocol factor). Bus bandwidths reported use core/collective.hpp,
// the definitions `bench` uses.
//
// Not modelled: NVLS/CollNet/PAT algorithms, NCCL's per-channel caps and size-dependent pipelining
// (the measured busbw at 64 MiB is below the model's; see results/predict-collective-model/).

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

class CommModel {
 public:
  // `calibration` may be null; its collective curves are used only when `gpu_name` is its GPU.
  CommModel(ComputeCapability cc, const std::string& gpu_name, const CalibrationProfile* calibration);

  // A collective of `bytes` (nccl-tests size) over a group. `all_to_all` gives the slowest flow of the
  // group's all-to-all (needed for kAllToAll only). One rank: no time.
  [[nodiscard]] CommEstimate collective(Collective c, Bytes bytes, const GroupLinks& group,
                                        const FlowLinks* all_to_all = nullptr) const;
  [[nodiscard]] CommEstimate point_to_point(Bytes bytes, const FlowLinks& flow) const;

  // Bus bandwidth of a collective that took `time`, as `bench` reports it.
  [[nodiscard]] static GBps bus_bandwidth(Collective c, Bytes bytes, DataType dtype, int ranks, Seconds time);

 private:
  [[nodiscard]] CommEstimate ring(Collective c, Bytes bytes, const GroupLinks& g) const;
  [[nodiscard]] CommEstimate tree(Bytes bytes, const GroupLinks& g) const;
  [[nodiscard]] CommEstimate one_step(Bytes bytes, const FlowLinks& flow, int nodes) const;

  ComputeCapability cc_;
  NcclArch arch_;
  const CalibrationProfile* calibration_ = nullptr;
};

}  // namespace commscale::predict

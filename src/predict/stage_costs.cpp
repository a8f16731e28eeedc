// The durations of the coarse program (stage_costs.hpp).

#include "predict/stage_costs.hpp"

#include <algorithm>
#include <tuple>

#include "program/breakdown.hpp"

namespace commscale::predict {
namespace {

constexpr std::array<UnitKind, 3> kKinds = {UnitKind::kEmbedding, UnitKind::kLayer, UnitKind::kHead};

std::size_t column(Phase phase, bool accumulate) {
  if (phase == Phase::kForward) return 0;
  return accumulate ? 2 : 1;
}

// The units of a fused op, run back to back in forward order (the order their times are summed in).
UnitCost fused_cost(const UnitWork& w, const UnitCosts& units) {
  UnitCost total;
  for (const UnitKind kind : kKinds) {
    const std::uint32_t n = kind == UnitKind::kEmbedding ? w.embeddings : kind == UnitKind::kLayer ? w.layers : w.heads;
    const UnitCost& c = units.of(kind, w.phase, w.accumulate);
    for (std::uint32_t i = 0; i < n; ++i) {
      total.seconds += c.seconds;
      total.compute += c.compute;
      total.tp_busy += c.tp_busy;
      total.tp_exposed += c.tp_exposed;
      total.gemm_flops += c.gemm_flops;
      total.gemm_seconds += c.gemm_seconds;
      total.issue += c.issue;
      total.host_wait += c.host_wait;
      total.first = c.first;  // parts are of one unit only
    }
  }
  if (w.part == UnitWork::Part::kFirstOp) return UnitCost{.seconds = total.first};
  // The rest keeps what the host added: the first op is too short to hold it.
  if (w.part == UnitWork::Part::kRest) total.seconds -= total.first;
  return total;
}

bool operator==(const UnitWork& a, const UnitWork& b) noexcept {
  return a.phase == b.phase && a.accumulate == b.accumulate && a.part == b.part && a.embeddings == b.embeddings &&
         a.layers == b.layers && a.heads == b.heads;
}

// fused_cost of the works a program repeats (a stage has a few kinds of fused op, each many times).
class FusedCosts {
 public:
  explicit FusedCosts(const UnitCosts& units) : units_(units) {}
  const UnitCost& operator()(const UnitWork& w) {
    for (const auto& [work, cost] : seen_) {
      if (work == w) return cost;
    }
    seen_.emplace_back(w, fused_cost(w, units_));
    return seen_.back().second;
  }

 private:
  const UnitCosts& units_;
  std::vector<std::pair<UnitWork, UnitCost>> seen_;
};

// Collectives and transfers by group handle, costed once per (group, kind, size).
class CommCosts {
 public:
  CommCosts(const LayoutLinks& links, const Target& target) : links_(links), target_(target) {}

  double operator()(const Op& op) {
    if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
      const Key key{c->group, c->kind, c->bytes.count()};
      for (const auto& [k, seconds] : cache_) {
        if (k == key) return seconds;
      }
      cache_.emplace_back(key, target_.comm.collective(c->kind, c->bytes, group(c->group)).time.value());
      return cache_.back().second;
    }
    // Every transfer of a plan has one size: the last one's time, per direction.
    const auto& p = std::get<PointToPoint>(op.payload);
    const bool forward = p.group == kPpForwardGroup;
    Transfer& last = forward ? forward_ : backward_;
    if (last.seconds < 0 || last.bytes != p.bytes.count()) {
      last.bytes = p.bytes.count();
      last.seconds = target_.comm.point_to_point(p.bytes, forward ? links_.forward : links_.backward).time.value();
    }
    return last.seconds;
  }

  // What the op loads the GPU with (interference.hpp), given its duration.
  InterferenceModel::Load load(const Op& op, double seconds) const {
    if (seconds <= 0) return {};
    if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
      const GroupLinks& g = group(c->group);
      return target_.interference.load(nccl_channels(g.bottleneck_class()),
                                       CommModel::bus_bandwidth(c->kind, c->bytes, c->dtype, g.ranks, Seconds(seconds)));
    }
    const auto& p = std::get<PointToPoint>(op.payload);
    const FlowLinks& flow = p.group == kPpForwardGroup ? links_.forward : links_.backward;
    return target_.interference.load(nccl_channels(flow.path_class), bandwidth(p.bytes, Seconds(seconds)));
  }

 private:
  [[nodiscard]] const GroupLinks& group(std::uint32_t handle) const noexcept {
    if (handle == kTpGroup) return links_.tp;
    if (handle == kDpGroup) return links_.dp;
    return links_.embedding;
  }

  struct Transfer {
    std::uint64_t bytes = 0;
    double seconds = -1.0;
  };

  const LayoutLinks& links_;
  const Target& target_;
  // (handle, kind, bytes) -> s; a program has a few sizes of collective (buckets, gathers, the end of step).
  using Key = std::tuple<std::uint32_t, Collective, std::uint64_t>;
  std::vector<std::pair<Key, double>> cache_;
  Transfer forward_, backward_;
};

// The host's cost to issue a unit's op (program/host_costs.hpp, by the op's class and phase).
double issue_seconds(const HostCosts& host, const WorkloadOp& op) {
  const auto* gemm = std::get_if<Gemm>(&op.payload);
  const HostOpClass cls = gemm != nullptr                                     ? host_op_class(*gemm)
                          : std::holds_alternative<MemoryKernel>(op.payload) ? HostOpClass::kKernel
                                                                              : HostOpClass::kCollective;
  return issue_cost(host, host_phase(op.phase, gemm), cls, gemm != nullptr && gemm->flash_continued).value();
}

}  // namespace

namespace {

// A unit's ops on the compute (0) and tp (1) streams at the given durations: each op's interval.
struct UnitRun {
  std::vector<Interval> busy;  // by op
  std::array<double, 2> stream_end{0.0, 0.0};
};
UnitRun run_unit(const OpList& ops, const std::vector<double>& seconds) {
  UnitRun r;
  r.busy.resize(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::size_t s = std::holds_alternative<TpCollective>(ops[i].payload) ? 1 : 0;
    double ready = r.stream_end[s];
    for (const int d : ops[i].deps) ready = std::max(ready, r.busy[static_cast<std::size_t>(d)].end);
    r.busy[i] = {ready, ready + seconds[i]};
    r.stream_end[s] = r.busy[i].end;
  }
  return r;
}

// Interference inside a unit (interference.hpp): each compute op lengthened by its overlap with the
// unit's collectives, and each collective by its overlap with compute, once (a unit's overlaps are a
// reduction beside a weight-gradient GEMM: short, and one pass settles them).
std::vector<double> interfered(const OpList& ops, const std::vector<double>& seconds, const UnitRun& run,
                               const Target& target, const GroupLinks& tp) {
  std::vector<double> out = seconds;
  if (target.interference.empty()) return out;
  for (std::size_t m = 0; m < ops.size(); ++m) {
    const auto* c = std::get_if<TpCollective>(&ops[m].payload);
    if (c == nullptr || seconds[m] <= 0) continue;
    const GBps busbw = CommModel::bus_bandwidth(c->kind, c->bytes, c->dtype, tp.ranks, Seconds(seconds[m]));
    const InterferenceModel::Load load = target.interference.load(nccl_channels(tp.bottleneck_class()), busbw);
    for (std::size_t k = 0; k < ops.size(); ++k) {
      if (std::holds_alternative<TpCollective>(ops[k].payload)) continue;
      const double o = std::max(0.0, std::min(run.busy[k].end, run.busy[m].end) -
                                         std::max(run.busy[k].start, run.busy[m].start));
      if (o <= 0) continue;
      const Beside kind = std::holds_alternative<Gemm>(ops[k].payload) ? Beside::kGemm : Beside::kMemory;
      out[k] += o * (1 - 1 / target.interference.compute_slowdown(kind, load));
      out[m] += o * (1 - 1 / target.interference.comm_slowdown(kind, load));
    }
  }
  return out;
}

}  // namespace

UnitCost unit_cost(const OpList& ops, const Target& target, const GroupLinks& tp) {
  UnitCost c;
  std::vector<double> seconds(ops.size(), 0.0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const WorkloadOp& op = ops[i];
    if (const auto* collective = std::get_if<TpCollective>(&op.payload)) {
      seconds[i] = target.comm.collective(collective->kind, collective->bytes, tp).time.value();
    } else {
      const OpPayload payload = std::holds_alternative<Gemm>(op.payload)
                                    ? OpPayload(std::get<Gemm>(op.payload))
                                    : OpPayload(std::get<MemoryKernel>(op.payload));
      seconds[i] = target.compute.time(payload, op.phase).value();
    }
    c.issue += issue_seconds(target.host, op);
  }
  UnitRun run = run_unit(ops, seconds);
  if (!target.interference.empty()) {
    seconds = interfered(ops, seconds, run, target, tp);
    run = run_unit(ops, seconds);
  }
  std::vector<Interval> compute;
  std::vector<Interval> comm;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (std::holds_alternative<TpCollective>(ops[i].payload)) {
      comm.push_back(run.busy[i]);
      c.tp_busy += seconds[i];
      continue;
    }
    compute.push_back(run.busy[i]);
    c.compute += seconds[i];
    if (const auto* g = std::get_if<Gemm>(&ops[i].payload)) {
      c.gemm_flops += g->flops.value();
      c.gemm_seconds += seconds[i];
    }
  }
  if (!ops.empty()) c.first = run.busy[0].end;
  c.seconds = std::max(run.stream_end[0], run.stream_end[1]);
  c.host_wait = std::max(0.0, c.issue - c.seconds);
  c.seconds += c.host_wait;
  c.tp_exposed = uncovered_length(comm, compute);
  return c;
}

UnitCosts::UnitCosts(const UnitLists& lists, const Target& target, const GroupLinks& tp) {
  for (std::size_t k = 0; k < kKinds.size(); ++k) {
    costs_[k][0] = unit_cost(lists.of(kKinds[k], Phase::kForward, false), target, tp);
    costs_[k][1] = unit_cost(lists.of(kKinds[k], Phase::kBackward, false), target, tp);
    costs_[k][2] = unit_cost(lists.of(kKinds[k], Phase::kBackward, true), target, tp);
  }
}

const UnitCost& UnitCosts::of(UnitKind kind, Phase phase, bool accumulate) const noexcept {
  return costs_[static_cast<std::size_t>(kind)][column(phase, accumulate)];
}

CostClasses::CostClasses(const CoarseProgram& program) {
  of.resize(program.set.programs.size());
  representative.resize(program.set.programs.size());
  for (std::size_t s = 0; s < program.set.programs.size(); ++s) {
    const std::vector<Op>& ops = program.set.programs[s];
    std::vector<std::uint32_t>& classes = of[s];
    std::vector<OpId>& first = representative[s];
    classes.resize(ops.size());
    // Whether op b takes op a's duration.
    const auto alike = [&](const Op& a, const Op& b) {
      const UnitWork& wa = program.work[s][a.id];
      const UnitWork& wb = program.work[s][b.id];
      if (!wa.empty() || !wb.empty()) return wa == wb;
      if (a.payload.index() != b.payload.index()) return false;
      if (const auto* ca = std::get_if<CollectiveOp>(&a.payload)) {
        const auto& cb = std::get<CollectiveOp>(b.payload);
        return ca->group == cb.group && ca->kind == cb.kind && ca->bytes == cb.bytes;
      }
      if (const auto* pa = std::get_if<PointToPoint>(&a.payload)) {
        const auto& pb = std::get<PointToPoint>(b.payload);
        return pa->group == pb.group && pa->bytes == pb.bytes;  // resize_transfers keeps them alike
      }
      if (const auto* ha = std::get_if<HostCopy>(&a.payload)) {
        const auto& hb = std::get<HostCopy>(b.payload);
        return ha->direction == hb.direction && ha->bytes == hb.bytes;
      }
      return false;  // another compute op: its own
    };
    for (const Op& op : ops) {
      std::size_t k = 0;
      while (k < first.size() && !alike(ops[first[k]], op)) ++k;
      if (k == first.size()) first.push_back(op.id);
      classes[op.id] = static_cast<std::uint32_t>(k);
    }
  }
}

StageCosts::StageCosts(const CoarseProgram& program, const CostClasses& classes, const UnitCosts& units,
                       const LayoutLinks& links, const Target& target)
    : classes_(classes) {
  CommCosts comm(links, target);
  FusedCosts fused(units);
  seconds_.resize(program.set.programs.size());
  folded_.resize(program.set.programs.size());
  gemm_share_.resize(program.set.programs.size());
  loads_.resize(program.set.programs.size());
  std::vector<UnitCost> by_class;
  std::vector<bool> is_fused;
  for (std::size_t s = 0; s < program.set.programs.size(); ++s) {
    const std::vector<Op>& ops = program.set.programs[s];
    by_class.clear();
    is_fused.clear();
    std::vector<double>& class_share = gemm_share_[s];  // GEMM share of a compute class's time (op_shares' values)
    std::vector<InterferenceModel::Load>& class_load = loads_[s];
    for (const OpId id : classes.representative[s]) {
      const Op& op = ops[id];
      const UnitWork& work = program.work[s][id];
      is_fused.push_back(!work.empty());
      if (!work.empty()) {
        by_class.push_back(fused(work));
        const UnitCost& u = by_class.back();
        class_share.push_back(u.compute > 0 ? u.gemm_seconds / u.compute : 0.0);
      } else if (std::holds_alternative<Gemm>(op.payload) || std::holds_alternative<MemoryKernel>(op.payload)) {
        by_class.push_back({.seconds = target.compute.time(op.payload, op.phase).value()});
        class_share.push_back(std::holds_alternative<Gemm>(op.payload) ? 1.0 : 0.0);
      } else if (std::holds_alternative<HostCopy>(op.payload)) {
        by_class.push_back({.seconds = target.compute.time(op.payload, op.phase).value()});
        class_share.push_back(kNotInterfering);
      } else {
        by_class.push_back({.seconds = comm(op)});
        class_share.push_back(kCommunication);
      }
      class_load.push_back(class_share.back() == kCommunication ? comm.load(op, by_class.back().seconds)
                                                                : InterferenceModel::Load{});
    }
    for (double& share : class_share) share = std::max(0.0, share);
    std::vector<double>& seconds = seconds_[s];
    seconds.resize(ops.size());
    const std::vector<std::uint32_t>& of = classes.of[s];
    for (std::size_t id = 0; id < ops.size(); ++id) {
      const UnitCost& c = by_class[of[id]];
      seconds[id] = c.seconds;
      if (!is_fused[of[id]]) continue;
      folded_[s].tp_busy += c.tp_busy;
      folded_[s].tp_exposed += c.tp_exposed;
      folded_[s].gemm_flops += c.gemm_flops;
      folded_[s].host_wait += c.host_wait;
    }
  }
}

}  // namespace commscale::predict

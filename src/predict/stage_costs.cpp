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
  const auto cls = static_cast<std::size_t>(std::holds_alternative<Gemm>(op.payload)           ? HostOpClass::kGemm
                                            : std::holds_alternative<MemoryKernel>(op.payload) ? HostOpClass::kKernel
                                                                                               : HostOpClass::kCollective);
  return host.issue[static_cast<std::size_t>(host_phase(op.phase))][cls].value();
}

}  // namespace

UnitCost unit_cost(const OpList& ops, const Target& target, const GroupLinks& tp) {
  UnitCost c;
  std::vector<double> end(ops.size(), 0.0);
  std::array<double, 2> stream_end{0.0, 0.0};
  std::vector<Interval> compute;
  std::vector<Interval> comm;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const WorkloadOp& op = ops[i];
    const auto* collective = std::get_if<TpCollective>(&op.payload);
    const std::size_t s = collective != nullptr ? 1 : 0;
    double ready = stream_end[s];
    for (const int d : op.deps) ready = std::max(ready, end[static_cast<std::size_t>(d)]);
    double seconds = 0.0;
    if (collective != nullptr) {
      seconds = target.comm.collective(collective->kind, collective->bytes, tp).time.value();
      comm.push_back({ready, ready + seconds});
      c.tp_busy += seconds;
    } else {
      const OpPayload payload = std::holds_alternative<Gemm>(op.payload)
                                    ? OpPayload(std::get<Gemm>(op.payload))
                                    : OpPayload(std::get<MemoryKernel>(op.payload));
      seconds = target.compute.time(payload, op.phase).value();
      compute.push_back({ready, ready + seconds});
      c.compute += seconds;
      if (const auto* g = std::get_if<Gemm>(&op.payload)) c.gemm_flops += g->flops.value();
    }
    end[i] = ready + seconds;
    stream_end[s] = end[i];
    if (i == 0) c.first = end[i];
    c.issue += issue_seconds(target.host, op);
  }
  c.seconds = std::max(stream_end[0], stream_end[1]);
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
                       const LayoutLinks& links, const Target& target) {
  CommCosts comm(links, target);
  FusedCosts fused(units);
  seconds_.resize(program.set.programs.size());
  folded_.resize(program.set.programs.size());
  std::vector<UnitCost> by_class;
  std::vector<bool> is_fused;
  for (std::size_t s = 0; s < program.set.programs.size(); ++s) {
    const std::vector<Op>& ops = program.set.programs[s];
    by_class.clear();
    is_fused.clear();
    for (const OpId id : classes.representative[s]) {
      const Op& op = ops[id];
      const UnitWork& work = program.work[s][id];
      is_fused.push_back(!work.empty());
      if (!work.empty()) {
        by_class.push_back(fused(work));
      } else if (std::holds_alternative<Gemm>(op.payload) || std::holds_alternative<MemoryKernel>(op.payload)) {
        by_class.push_back({.seconds = target.compute.time(op.payload, op.phase).value()});
      } else {
        by_class.push_back({.seconds = comm(op)});
      }
    }
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

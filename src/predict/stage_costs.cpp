// The durations of the coarse program (stage_costs.hpp).

#include "predict/stage_costs.hpp"

#include <algorithm>
#include <map>
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
      total.first = c.first;  // parts are of one unit only
    }
  }
  if (w.part == UnitWork::Part::kFirstOp) return UnitCost{.seconds = total.first};
  if (w.part == UnitWork::Part::kRest) total.seconds -= total.first;
  return total;
}

// Collectives and transfers by group handle, costed once per (group, kind, size).
class CommCosts {
 public:
  CommCosts(const LayoutLinks& links, const Target& target) : links_(links), target_(target) {}

  double operator()(const Op& op) {
    if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
      auto [found, added] = cache_.try_emplace({c->group, static_cast<int>(c->kind), c->bytes.count()}, 0.0);
      if (added) found->second = target_.comm.collective(c->kind, c->bytes, group(c->group)).time.value();
      return found->second;
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
  std::map<std::tuple<std::uint32_t, int, std::uint64_t>, double> cache_;  // (handle, kind, bytes) -> s
  Transfer forward_, backward_;
};

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
  }
  c.seconds = std::max(stream_end[0], stream_end[1]);
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

StageCosts::StageCosts(const CoarseProgram& program, const UnitCosts& units, const LayoutLinks& links,
                       const Target& target) {
  CommCosts comm(links, target);
  seconds_.resize(program.set.programs.size());
  folded_.resize(program.set.programs.size());
  for (std::size_t s = 0; s < program.set.programs.size(); ++s) {
    const std::vector<Op>& ops = program.set.programs[s];
    std::vector<double>& seconds = seconds_[s];
    seconds.resize(ops.size());
    for (const Op& op : ops) {
      const UnitWork& work = program.work[s][op.id];
      if (!work.empty()) {
        const UnitCost c = fused_cost(work, units);
        seconds[op.id] = c.seconds;
        folded_[s].tp_busy += c.tp_busy;
        folded_[s].tp_exposed += c.tp_exposed;
        folded_[s].gemm_flops += c.gemm_flops;
      } else if (std::holds_alternative<Gemm>(op.payload) || std::holds_alternative<MemoryKernel>(op.payload)) {
        seconds[op.id] = target.compute.time(op.payload, op.phase).value();
      } else {
        seconds[op.id] = comm(op);
      }
    }
  }
}

}  // namespace commscale::predict

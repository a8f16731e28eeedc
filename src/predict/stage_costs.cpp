// The durations of the coarse program (stage_costs.hpp).

#include "predict/stage_costs.hpp"

#include <algorithm>
#include <tuple>

#include "predict/clock.hpp"
#include "predict/op_costs.hpp"
#include "predict/timed_simulation.hpp"
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
      total.host_wait += c.host_wait;
      total.first = c.first;  // parts are of one unit only
    }
  }
  if (w.part == UnitWork::Part::kFirstOp) return UnitCost{.seconds = total.first};
  // The rest keeps what the host held back: the first op's share of it is small.
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

}  // namespace

// The unit as predict runs it: its list as a one-rank program (program_builder.hpp, unit_program) whose
// collectives take the real tensor-parallel group's links (ProgramCosts), simulated with the host issuing
// its ops and with interference (simulate_timed); the clock is the coarse program's pass, at the step's
// GEMM share. The list is stamped twice: the second copy follows the first as each unit of a stage follows
// the one before, so it runs as units do in a steady state (the host ahead of the GPU, or setting its pace),
// and its window, from the first copy's end to its own, is the unit's cost.
UnitCost unit_cost(const OpList& ops, const Target& target, const GroupLinks& tp) {
  UnitCost c;
  if (ops.empty()) return c;
  const ProgramSet set = unit_program(ops, 2);
  const ProgramCosts costs(set, target, {tp});
  HostCosts host = target.host;  // a unit has no step start, no optimizer and no transfers to wait at
  host.step = Seconds(0.0);
  host.sync = HostSync::kNone;
  host.sync_after_p2p = false;
  const SimulationOptions options{.reduce = false, .host = host.zero() ? nullptr : &host};
  Simulation sim;
  // One interference re-simulation: a unit's overlaps settle in one pass closer to the full program's than
  // when iterated to the unit's own 0.1% (the stage model's largest difference from the full simulation over
  // its test's grid: 0.568% after one, 0.655% after two, 0.673% after three or four).
  simulate_timed(set, costs, costs, ClockModel{}, target.interference, options, sim, 1);
  const std::vector<double>& start = sim.start[0];
  const std::vector<double>& data_start = sim.data_start[0];
  const std::vector<double>& end = sim.end[0];
  const std::size_t n = ops.size();
  const double from = *std::max_element(end.begin(), end.begin() + static_cast<std::ptrdiff_t>(n));
  const double to = std::max(from, *std::max_element(end.begin() + static_cast<std::ptrdiff_t>(n), end.end()));
  c.seconds = to - from;
  c.first = std::clamp(end[n] - from, 0.0, c.seconds);
  // The compute stream in the window: running an op, held back by the host, or waiting for a collective.
  std::vector<Interval> comm;
  std::vector<Interval> covered;  // running or held back: what a collective is not exposed beside
  for (std::size_t i = n; i < 2 * n; ++i) {
    const double seconds = end[i] - data_start[i];
    if (std::holds_alternative<LayerCollective>(ops[i - n].payload)) {
      c.tp_busy += seconds;
      comm.push_back({std::max(data_start[i], from), std::min(end[i], to)});
      continue;
    }
    c.compute += seconds;
    covered.push_back({data_start[i], end[i]});
    if (const auto* g = std::get_if<Gemm>(&ops[i - n].payload)) {
      c.gemm_flops += g->flops.value();
      c.gemm_seconds += seconds;
    }
    const double hold = sim.host_hold.empty() ? 0.0 : sim.host_hold[0][i];
    if (hold > 0) {
      c.host_wait += hold;
      covered.push_back({start[i] - hold, start[i]});
    }
  }
  std::erase_if(comm, [](const Interval& v) { return v.end <= v.start; });
  c.tp_exposed = uncovered_length(comm, covered);
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

#pragma once

// Internal to the stage model (stage_model.hpp): the durations of the program builder's coarse
// program (parallel/program_builder.hpp, build_coarse_program), for the simulator (simulator.hpp).
// A fused op takes what its units take as predict runs them (unit_cost: each unit's list simulated as a
// one-rank program), summed: each unit ends with both streams idle. Collectives and transfers keep their real sizes,
// with durations from the real groups' links: every stage's groups take the slowest of their kind.

#include <array>
#include <vector>

#include "parallel/program_builder.hpp"
#include "predict/group_links.hpp"
#include "predict/interference.hpp"
#include "predict/simulator.hpp"
#include "predict/target.hpp"
#include "workload/op_list.hpp"

namespace commscale::predict {

// A unit's ops (workload/layer_ops.hpp) as predict runs them (stage_costs.cpp, unit_cost): on the compute
// and tp streams, the host issuing them, with interference, in a steady state of units back to back.
struct UnitCost {
  double seconds = 0.0;     // from the unit before's end to its own
  double compute = 0.0;     // compute stream busy
  double tp_busy = 0.0;     // tp stream busy
  double tp_exposed = 0.0;  // tp busy while compute is idle (and not held back by the host)
  double gemm_flops = 0.0;
  double gemm_seconds = 0.0;  // of `compute`, the GEMMs' (the rest is memory-bound kernels)
  double first = 0.0;  // when the unit's first op ends (ZeRO-3 prefetches the next unit from there)
  // The compute stream held back by the host (Target::host): ops it had not issued yet when the stream and
  // their deps let them start.
  double host_wait = 0.0;
};
[[nodiscard]] UnitCost unit_cost(const OpList& ops, const Target& target, const GroupLinks& tp);

// The cost of every unit's op list (parallel/program_builder.hpp, UnitLists), by kind and phase.
class UnitCosts {
 public:
  UnitCosts(const UnitLists& lists, const Target& target, const GroupLinks& tp);
  [[nodiscard]] const UnitCost& of(UnitKind kind, Phase phase, bool accumulate) const noexcept;

 private:
  std::array<std::array<UnitCost, 3>, 3> costs_;  // [kind][forward, backward, accumulating backward]
};

// The links a plan's layout gives each kind of group: the slowest of each.
struct LayoutLinks {
  GroupLinks tp, dp, embedding;
  FlowLinks forward, backward;  // pipeline transfers, stage to next stage and back
};

// The ops of a coarse program that take one duration under any unit costs and links: a fused op's
// units, a collective's group, kind and size, a transfer's direction (every transfer of a plan has
// one size); other compute ops alone. Depends on the program only: built once per program.
struct CostClasses {
  explicit CostClasses(const CoarseProgram& program);
  std::vector<std::vector<std::uint32_t>> of;       // [stage][op]: its class
  std::vector<std::vector<OpId>> representative;    // [stage][class]: its first op
};

// The durations of a coarse program's ops, computed once per class.
class StageCosts final : public OpCosts, public InterferenceCosts {
 public:
  StageCosts(const CoarseProgram& program, const CostClasses& classes, const UnitCosts& units,
             const LayoutLinks& links, const Target& target);

  [[nodiscard]] Seconds duration(int rank, const Op& op) const override {
    return Seconds(seconds_[static_cast<std::size_t>(rank)][op.id]);
  }
  [[nodiscard]] std::uint64_t signature(int rank) const override { return static_cast<std::uint64_t>(rank); }
  [[nodiscard]] const double* seconds_by_op(int rank) const override {
    return seconds_[static_cast<std::size_t>(rank)].data();
  }
  [[nodiscard]] InterferenceModel::Load comm_load(int rank, const Op& op) const override {
    const auto s = static_cast<std::size_t>(rank);
    return loads_[s][classes_.of[s][op.id]];
  }
  [[nodiscard]] double gemm_share(int rank, const Op& op) const override {
    const auto s = static_cast<std::size_t>(rank);
    return gemm_share_[s][classes_.of[s][op.id]];
  }

  // What the fused ops of a stage hold inside them (one rank of the stage, per step).
  struct Folded {
    double tp_busy = 0.0;
    double tp_exposed = 0.0;
    double gemm_flops = 0.0;
    double host_wait = 0.0;
  };
  [[nodiscard]] const std::vector<Folded>& folded() const noexcept { return folded_; }

 private:
  const CostClasses& classes_;
  std::vector<std::vector<double>> seconds_;  // [stage][op]
  std::vector<std::vector<double>> gemm_share_;  // [stage][class]
  std::vector<std::vector<InterferenceModel::Load>> loads_;  // [stage][class]
  std::vector<Folded> folded_;  // by stage
};

}  // namespace commscale::predict

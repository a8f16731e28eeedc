#pragma once

// Internal to the stage model (stage_model.hpp): a coarse step program with one rank per pipeline
// stage, built by the program builder's rules (parallel/program_builder.hpp) at the granularity of a
// unit (the embedding, a layer, the head) or of a whole forward or backward of a model chunk when
// nothing on the data-parallel stream needs finer steps. Each compute op stands for a unit's kernels
// and tensor-parallel collectives, with the duration the unit took alone (unit_cost); collectives and
// transfers keep their real sizes, with durations from the real groups' links. Durations are stored
// per op, so the coarse program is simulated by the same simulator as the real one.

#include <vector>

#include "parallel/plan.hpp"
#include "predict/group_links.hpp"
#include "predict/simulator.hpp"
#include "predict/target.hpp"
#include "workload/op_list.hpp"
#include "workload/transformer.hpp"

namespace commscale::predict {

// A unit's ops (workload/layer_ops.hpp) run alone on the compute and tp streams.
struct UnitCost {
  double seconds = 0.0;     // until both streams are done
  double compute = 0.0;     // compute stream busy
  double tp_busy = 0.0;     // tp stream busy
  double tp_exposed = 0.0;  // tp busy while compute is idle
  double gemm_flops = 0.0;
  double first = 0.0;  // when the unit's first op ends (ZeRO-3 prefetches the next unit from there)
};
[[nodiscard]] UnitCost unit_cost(const OpList& ops, const Target& target, const GroupLinks& tp);

struct UnitCosts {
  UnitCost layer_fwd, layer_bwd, embedding_fwd, embedding_bwd, head_fwd, head_bwd;
  // The backwards of every microbatch but the first, which add their weight gradients to the earlier
  // ones (a kernel of their own with eager kernels; the same as above otherwise).
  UnitCost layer_bwd_acc, embedding_bwd_acc, head_bwd_acc;
};

// The links a plan's layout gives each kind of group: the slowest of each.
struct LayoutLinks {
  GroupLinks tp, dp, embedding;
  FlowLinks forward, backward;  // pipeline transfers, stage to next stage and back
};

// One op of a stage's coarse program. Communication ops know their counterpart (matched at build
// time, in program order, as the simulator matches calls): a transfer's other side, the other end of
// the tied-embedding all-reduce. Collectives over the stage's own (one-rank) tp and dp groups have
// none: they run as soon as they are reached, for the duration of the real groups' collective.
enum class CoarseKind : std::uint8_t { kCompute, kCollective, kSend, kRecv };

struct CoarseOp {
  Stream stream = Stream::kCompute;
  CoarseKind kind = CoarseKind::kCompute;
  std::uint8_t group = 0;  // handle: kTpGroup, kDpGroup, kPpForwardGroup, kPpBackwardGroup, kEmbeddingGroup
  int peer = -1;           // the other stage of a transfer
  double seconds = 0.0;
  std::uint32_t deps_begin = 0;  // deps: CoarseStage::deps[deps_begin, deps_end)
  std::uint32_t deps_end = 0;
  int partner_stage = -1;  // the counterpart's stage and op, -1 without one
  OpId partner_op = 0;
  Bytes bytes;  // communication ops: the real size
};

struct CoarseStage {
  std::vector<CoarseOp> ops;
  std::vector<OpId> deps;
  double tp_busy = 0.0;  // tensor-parallel time folded into compute ops
  double tp_exposed = 0.0;
  double gemm_flops = 0.0;  // one rank's GEMM FLOPs per step
};

struct CoarseProgram {
  bool tied_embedding_group = false;
  std::vector<CoarseStage> stages;  // one rank per stage
};

[[nodiscard]] CoarseProgram build_coarse_program(const TransformerConfig& m, const ParallelPlan& p,
                                                 const UnitCosts& units, const LayoutLinks& links,
                                                 const Target& target);
// The same into `out`, reusing its storage (a search builds thousands).
void build_coarse_program(const TransformerConfig& m, const ParallelPlan& p, const UnitCosts& units,
                          const LayoutLinks& links, const Target& target, CoarseProgram& out);
// Pairs every send with its receive and the two ends of the embedding all-reduce, in program order.
void match_counterparts(CoarseProgram& program);

// The coarse program's times, by the simulator's rules (simulator.hpp), for one rank per stage.
struct CoarseTimes {
  std::vector<std::vector<double>> start;       // [stage][op]
  std::vector<std::vector<double>> data_start;  // when data moves (communication), or the start
  std::vector<std::vector<double>> end;
  double step = 0.0;
};
[[nodiscard]] CoarseTimes run_coarse_program(const CoarseProgram& program);
void run_coarse_program(const CoarseProgram& program, CoarseTimes& out);

// The same program as a ProgramSet with its durations, for the general simulator (tests compare them).
struct CoarseAsProgramSet {
  ProgramSet set;
  std::vector<std::vector<double>> durations;  // [stage][op]
};
[[nodiscard]] CoarseAsProgramSet as_program_set(const CoarseProgram& program);

class CoarseCosts final : public OpCosts {
 public:
  explicit CoarseCosts(const CoarseAsProgramSet& program) : program_(program) {}
  [[nodiscard]] Seconds duration(int rank, const Op& op) const override {
    return Seconds(program_.durations[static_cast<std::size_t>(rank)][op.id]);
  }
  [[nodiscard]] std::uint64_t signature(int rank) const override { return static_cast<std::uint64_t>(rank); }

 private:
  const CoarseAsProgramSet& program_;
};

}  // namespace commscale::predict

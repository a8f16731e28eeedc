#pragma once

// Internal to the program builder: emits the op list of one pipeline stage. stage_builder.cpp runs
// the schedule and stamps the workload's op lists (or, in the coarse build, one op per unit or chunk:
// stage_units.cpp); grad_sync.cpp adds the data-parallel and end-of-step ops. See program_builder.hpp
// for what the result contains.

#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parallel/plan.hpp"
#include "parallel/program_builder.hpp"
#include "parallel/schedule.hpp"
#include "program/op.hpp"
#include "workload/op_list.hpp"
#include "workload/transformer.hpp"

namespace commscale {

inline constexpr OpId kNoOp = std::numeric_limits<OpId>::max();

// Appends `list` to `ops` for one (microbatch, layer) as build_program stamps a unit (StageBuilder::stamp,
// unit_program). The first op also waits for what is `pending` (a receive, trailing collectives of the
// previous list, a parameter gather) and, if it is a collective, for `last_compute` (its producer).
// Collectives after the list's last compute op stay pending. `stamped` is called after each op is
// appended (the builder closes gradient buckets there).
void stamp_list(const OpList& list, int mb, int layer, std::vector<Op>& ops, std::vector<OpId>& pending,
                OpId& last_compute, const std::function<void(OpId, const WorkloadOp&)>& stamped);

class StageBuilder {
 public:
  // `lists` null: the coarse build (program_builder.hpp, UnitWork), which needs none.
  StageBuilder(const TransformerConfig& m, const ParallelPlan& p, int stage, const UnitLists* lists);
  [[nodiscard]] std::vector<Op> build();
  // The coarse build: what each op stands for (after build()).
  [[nodiscard]] std::vector<UnitWork> take_work() { return std::move(work_); }
  // The units of every chunk of the stage, counted (program_builder.hpp, stage_units).
  [[nodiscard]] StageUnits unit_counts() const;

 private:
  static constexpr OpId kNone = kNoOp;

  struct Unit {
    UnitKind kind = UnitKind::kLayer;
    int layer = -1;  // -1 for the embedding and the head
    std::uint64_t parameters = 0;         // what the data-parallel group reduces (all but routed experts')
    std::uint64_t expert_parameters = 0;  // the routed experts' on this rank (an MoE layer)
    bool moe = false;                     // an MoE layer (is_moe_layer)
  };

  // The gradient buckets of one group: the data-parallel group's (every parameter but the routed experts'),
  // or in an MoE plan the expert-data-parallel group's (the routed experts').
  struct Buckets {
    std::uint32_t group = kDpGroup;
    int ranks = 1;           // the group's size
    std::string_view label;  // "dp", "edp": in op names
    int index = 0;
    std::uint64_t elements = 0;
    OpId producer = kNoOp;
    std::map<int, int> in_microbatch;
    std::vector<std::uint64_t> final_sizes;  // padded element counts of the last pass, for the all-gathers
    std::vector<OpId> final_reductions;      // their reductions, for DDP's copies back
  };

  void forward(int mb, int chunk);
  void backward(int mb, int chunk);
  void run_unit(const Unit& unit, int mb, Phase phase);
  void stamp(const OpList& list, int mb, int layer);
  OpId emit(Op op, UnitWork work = {});

  // stage_units.cpp: the coarse build.
  [[nodiscard]] bool coarse() const noexcept { return lists_ == nullptr; }
  [[nodiscard]] bool fuse_chunk(Phase phase) const noexcept;
  [[nodiscard]] std::size_t coarse_op_bound() const noexcept;
  void run_fused_chunk(const std::vector<Unit>& units, int mb, Phase phase);
  void run_fused_unit(const Unit& unit, int mb, Phase phase);
  OpId emit_fused(int mb, int layer, UnitWork work);
  OpId emit_p2p(P2pDirection direction, std::uint32_t group, int peer, int mb, int chunk, Phase phase);
  [[nodiscard]] std::string chunk_label(int mb, int chunk, Phase phase) const;
  [[nodiscard]] int virtual_stage(int chunk) const noexcept { return chunk * p_.pp + stage_; }
  [[nodiscard]] bool first_virtual(int chunk) const noexcept { return virtual_stage(chunk) == 0; }
  [[nodiscard]] bool last_virtual(int chunk) const noexcept { return virtual_stage(chunk) == p_.pp * p_.chunks - 1; }
  [[nodiscard]] std::vector<Unit> chunk_units(int chunk) const;

  // offload_ops.cpp: the copies of parameters and activations to and from host memory.
  [[nodiscard]] bool offloads_during_step() const noexcept;
  void before_unit(const Unit& unit, int mb, Phase phase);
  void after_forward(const Unit& unit, int mb);
  OpId emit_host_copy(const Unit& unit, int mb, Phase phase, CopyDirection direction, Bytes bytes, const char* what,
                      OpId after);
  [[nodiscard]] Bytes offloaded_layer_bytes() const;

  // fp8_step_ops.cpp: FP8's amax reductions (delayed scaling) and the weights' cast once per step.
  void fp8_amax_reduction(int mb, int chunk, Phase phase);
  void fp8_weight_cast(std::vector<OpId> deps);

  // grad_sync.cpp
  void begin_backward_pass(int mb);
  void grads_ready(OpId producer, std::uint64_t parameters, bool experts = false);
  void flush_bucket();  // both groups' open buckets
  void flush(Buckets& b);
  void gather_updated(const Buckets& b, OpId optimizer, std::vector<OpId>& gathers);
  [[nodiscard]] bool copies_into_buckets() const noexcept;
  OpId emit_bucket_copy(std::string name, std::uint64_t elements, std::vector<OpId> deps);
  void zero3_gather(const Unit& unit, int mb, Phase phase, OpId fetched);
  void zero3_reduce(const Unit& unit, int mb, OpId producer);
  void end_of_step();
  [[nodiscard]] std::uint64_t padded(std::uint64_t elements, int ranks) const noexcept;
  [[nodiscard]] std::uint64_t replicated_parameters() const;
  OpId emit_collective(std::string name, Stream stream, std::uint32_t group, Collective kind, Bytes bytes, Phase phase,
                       int mb, int layer, std::vector<OpId> deps);

  const TransformerConfig& m_;
  const ParallelPlan& p_;
  const int stage_;
  const int microbatches_;
  const UnitLists* lists_;

  std::vector<Op> ops_;
  std::vector<UnitWork> work_;  // the coarse build: per op
  std::vector<std::vector<Unit>> units_;  // chunk_units, by chunk (set by build)
  std::vector<OpId> pending_;  // what the next op stamped must wait for (a receive, trailing collectives, a gather)
  std::map<std::pair<int, int>, std::vector<OpId>> carried_;  // forward leftovers for the backward of (mb, chunk)
  OpId last_compute_ = kNone;
  OpId last_dp_ = kNone;              // the latest op on the dp stream
  OpId previous_unit_first_ = kNone;  // ZeRO-3's and offload's prefetch bound
  std::vector<OpId> offloaded_;       // this forward pass's copies of activations to the host, by layer
  OpId last_grad_producer_ = kNone;

  // Gradient buckets (ZeRO 0-2).
  bool reducing_ = false;  // this backward pass reduces (ZeRO 2: every one; else the last microbatch's)
  int backward_mb_ = 0;
  Buckets dense_;
  Buckets experts_;
};

}  // namespace commscale

#pragma once

// Builds the step program (program/op.hpp) of a plan: one op list per pipeline stage, shared by the
// tp * dp ranks of the stage, and each rank's communication groups.
//
// Groups, by handle (the same on every rank that has them; a group's handle is its GroupRole's value):
//   0 tp          tensor-parallel group (members by tp coordinate)
//   1 dp          data-parallel group (by dp coordinate)
//   2 pp-fwd      pipeline group (by stage) carrying activations forward
//   3 pp-bwd      the same ranks carrying gradients backward: a separate communicator, so that the
//                 two flows between one pair of ranks (interleaved with pp 2) are never confused
//   4 embedding   first and last stage, tied embeddings with pp > 1 only (Megatron-LM's embedding group); in
//                 an MoE plan every rank has the slot, holding only the rank where it has no embedding group
//   5 ep          MoE plans only: the expert-parallel group (ExpertLayout, by ep coordinate): the dispatch and
//                 combine all-to-alls
//   6 edp         MoE plans only: the expert-data-parallel group (by edp coordinate; with cp > 1 it spans cp
//                 ranks too: ExpertLayout): the experts' gradients, reduced in buckets of their own as the
//                 data-parallel group reduces the rest
//   7 cp          context-parallel plans (cp > 1) only: the context-parallel group (by cp coordinate): attention's
//                 key-value exchanges (CONTEXT_PARALLEL.md); the slots 4 to 6 hold only the rank where the plan
//                 has no such group, and the dp group (1) is the dp x cp ranks, in rank order
//   8 etp         MoE plans with expert tensor parallelism (etp > 1) only: the expert-tensor-parallel group (by etp
//                 coordinate): the all-gather of the dispatched rows and the reduce-scatter of the experts'
//                 outputs (MOE.md); the slots 4 to 7 hold only the rank where the plan has no such group
//
// What a step contains, per rank, in schedule order (parallel/schedule.hpp):
//  - per microbatch and chunk: receive (pp-recv), the layers' forward ops (workload/layer_ops.hpp,
//    names "mb{m}.L{l}.fwd.{op}", the embedding and head as "mb{m}.fwd.{op}"), send (pp-send); the
//    backward likewise, recompute included. Sends and receives are named "mb{m}[.c{chunk}].{fwd|bwd}.{send|recv}".
//  - data-parallel gradient reduction in buckets of --bucket-mb, filled in backward order, a parameter
//    tensor never split (as PyTorch DDP buckets): an all-reduce (ZeRO 0) or a reduce-scatter (ZeRO 1
//    and 2), each waiting for the op that completed the bucket's last gradient, so it overlaps the
//    rest of the backward. ZeRO 0 and 1 keep full gradients and reduce once, in the backward of the
//    last microbatch of each chunk ("dp.bucket{k}.*"); ZeRO 2 keeps only its shard so it reduces in
//    every microbatch ("mb{m}.dp.bucket{k}.reduce_scatter"). Reduce-scatter and all-gather buckets
//    are padded to a multiple of dp * 16 bytes so every shard is whole and aligned.
//    A framework that copies gradients into buckets (PyTorch DDP, framework.hpp; ZeRO 0) adds a copy kernel
//    on the compute stream after each gradient ("...{op}.bucket_copy"), which the bucket's all-reduce waits
//    for, and at the end of the backward copies each bucket back after its all-reduce ("dp.bucket{k}.copy_back").
//  - ZeRO 3: per layer (and embedding, head) and microbatch, an all-gather of its parameters before
//    its forward and again before its backward ("...param_all_gather", prefetching at most one layer
//    ahead), and a reduce-scatter of its gradients after its backward ("...grad_reduce_scatter").
//  - end of step: with sequence parallelism, an all-reduce over tp of the replicated norm and bias
//    gradients; with tied embeddings and pp > 1, the embedding-gradient all-reduce; the optimizer
//    ("step.optimizer", over this rank's ZeRO shard); with ZeRO 1 and 2, the all-gathers of the
//    updated parameters, bucket by bucket ("step.bucket{k}.all_gather").

#include <vector>

#include "parallel/plan.hpp"
#include "program/op.hpp"
#include "workload/op_list.hpp"
#include "workload/transformer.hpp"

namespace commscale {

// A group's handle is its role's value (program/op.hpp, GroupRole).
[[nodiscard]] constexpr std::uint32_t handle_of(GroupRole role) noexcept { return static_cast<std::uint32_t>(role); }
inline constexpr std::uint32_t kTpGroup = handle_of(GroupRole::kTp);
inline constexpr std::uint32_t kDpGroup = handle_of(GroupRole::kDp);
inline constexpr std::uint32_t kPpForwardGroup = handle_of(GroupRole::kPpForward);
inline constexpr std::uint32_t kPpBackwardGroup = handle_of(GroupRole::kPpBackward);
inline constexpr std::uint32_t kEmbeddingGroup = handle_of(GroupRole::kEmbedding);
inline constexpr std::uint32_t kExpertGroup = handle_of(GroupRole::kExpert);
inline constexpr std::uint32_t kExpertDpGroup = handle_of(GroupRole::kExpertDp);
inline constexpr std::uint32_t kContextGroup = handle_of(GroupRole::kContext);
inline constexpr std::uint32_t kExpertTpGroup = handle_of(GroupRole::kExpertTp);

// The program of every rank. Throws InputError when it would be too large (program_size.hpp).
// prepare_step (prepared_step.hpp) builds it and checks it for the engines.
[[nodiscard]] ProgramSet build_program(const CheckedPlan& plan);

// The op list of one pipeline stage (what build_program shares between that stage's ranks).
[[nodiscard]] std::vector<Op> build_stage_program(const TransformerConfig& m, const ParallelPlan& p, int stage);

// A piece of a model chunk with its own op lists (and, under ZeRO-3, its own parameter gathers).
enum class UnitKind : std::uint8_t { kEmbedding, kLayer, kHead };

// The workload's op lists (workload/layer_ops.hpp) the builder stamps for each unit and phase. They
// read the plan's layer_sharding (their key for a cache: plans of one sharding have one set of lists, and
// the same durations) and pp (only the head's gradient count, which no duration depends on).
class UnitLists {
 public:
  UnitLists(const TransformerConfig& m, const ParallelPlan& p);
  // What shapes the lists' ops, the key of a cache of what they cost: the plan's layer sharding (the
  // constructor reads nothing else of the plan but pp). A field the lists come to read belongs here.
  [[nodiscard]] static LayerSharding shape(const ParallelPlan& p) noexcept { return layer_sharding(p); }
  // `accumulate`: the backward of every microbatch but the first, whose weight gradients add to the
  // earlier ones (a kernel of their own with eager kernels; the same lists as the first otherwise).
  // `moe`: a layer's MoE form (is_moe_layer), for a model with experts.
  [[nodiscard]] const OpList& of(UnitKind kind, Phase phase, bool accumulate, bool moe = false) const noexcept;

 private:
  OpList layer_fwd_, layer_bwd_, embedding_fwd_, embedding_bwd_, head_fwd_, head_bwd_;
  OpList layer_bwd_acc_, embedding_bwd_acc_, head_bwd_acc_;
  OpList moe_fwd_, moe_bwd_, moe_bwd_acc_;  // empty for a dense model
};

// A unit's list alone as a one-rank program, stamped `copies` times back to back as build_program stamps
// a stage's units one after another (op i of copy c is op c * list.size() + i, microbatch c): what the
// predictor simulates to cost a unit (predict/stage_costs.hpp). Its one group, handle kTpGroup, holds only
// the rank: a cost model gives its collectives the real tensor-parallel group's links.
[[nodiscard]] ProgramSet unit_program(const OpList& list, int copies);

// The coarse build, for search: the same schedule, transfers, gradient buckets, ZeRO gathers and end
// of step as build_program, with each unit's kernels and tensor-parallel collectives as one compute
// op (a MemoryKernel that moves nothing: its cost is its units'), and the units of a chunk's forward
// or backward as one op where nothing on the data-parallel stream waits for a unit in between (not
// under ZeRO-3, nor in a backward that fills gradient buckets). Buckets close at unit boundaries.
// Under ZeRO-3 a unit is two ops, its first kernel and the rest, as the next unit's gather waits for
// the first only. Its ops have no names: a search builds thousands of these programs, and formatting
// the names would cost more than simulating them.
struct UnitWork {
  enum class Part : std::uint8_t { kWhole, kFirstOp, kRest };
  Phase phase = Phase::kForward;  // kForward, or kBackward (its recompute included)
  bool accumulate = false;        // see UnitLists::of
  Part part = Part::kWhole;
  std::uint32_t embeddings = 0;  // how many units of each kind, run back to back
  std::uint32_t layers = 0;
  std::uint32_t heads = 0;
  [[nodiscard]] bool empty() const noexcept { return embeddings + layers + heads == 0; }
};

// The units one rank of `stage` runs for each microbatch, forward and again backward (its chunks' together): the
// coarse program's fused ops of a microbatch hold exactly these. What search bounds a stage's compute by.
struct StageUnits {
  std::uint32_t embeddings = 0, layers = 0, heads = 0;
  std::uint32_t moe_layers = 0;  // of the layers, those with experts (is_moe_layer)
};
[[nodiscard]] StageUnits stage_units(const TransformerConfig& m, const ParallelPlan& p, int stage);

// One rank per pipeline stage (rank s runs stage s), standing for the stage's tp x dp ranks: its "tp"
// and "dp" groups hold only itself (their collectives run when reached; a cost model gives them the
// real groups' durations), its pipeline and embedding groups are the real ones' stages.
struct CoarseProgram {
  ProgramSet set;
  std::vector<std::vector<UnitWork>> work;  // [stage][op]: what a fused op stands for; empty otherwise
};

// The plan must be valid for the model (validate_plan, as a search's enumeration checks its plans).
[[nodiscard]] CoarseProgram build_coarse_program(const TransformerConfig& m, const ParallelPlan& p);

// What shapes a coarse program: every field of the plan that build_coarse_program reads, but the
// micro-batch size (it enters only through the transfers' bytes: resize_transfers) and what changes only
// its fused ops' durations (UnitLists, keyed by layer_sharding). Two plans of one shape take one program.
// A field the builder comes to read belongs here, or a search would hand a plan another plan's program.
struct CoarseShape {
  int dp = 1, tp = 1, pp = 1;
  bool sequence_parallel = false;
  int zero_stage = 0;
  int microbatches = 1;  // per step and pipeline (microbatches_per_step)
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int chunks = 1;
  std::uint64_t bucket_bytes = 0;
  bool overlap_grad_reduce = false;
  int first_stage_layers = 0, last_stage_layers = 0;
  Optimizer optimizer = Optimizer::kAdam;       // the end of step's optimizer op
  KernelSet kernels = KernelSet::kFused;        // the gradient bucket copies' and the optimizer's kernels
  Framework framework = Framework::kCommscale;  // whether gradients are copied into buckets
  LoraSpec lora;                                // what trains: the gradients reduced and the optimizer's parameters
  OffloadDevice offload_optimizer = OffloadDevice::kNone;  // the end of step's update on the host
  OffloadDevice offload_params = OffloadDevice::kNone;     // a parameter copy before each unit
  int offloaded_micro_batch = 0;  // with activation offload, the micro-batch size: its copies' bytes (else 0)
  friend bool operator==(const CoarseShape&, const CoarseShape&) = default;
};
[[nodiscard]] CoarseShape coarse_shape(const ParallelPlan& p);

// The bytes of every pipeline transfer (send and receive, forward and backward) of a plan's step.
[[nodiscard]] Bytes pipeline_transfer_bytes(const TransformerConfig& m, const ParallelPlan& p);
// The micro-batch size enters a coarse program only through its transfers' bytes: the program of a
// plan is that of another plan differing only in micro-batch size (at the same number of microbatches
// per step) with its transfers set to pipeline_transfer_bytes of the plan. Sets them.
void resize_transfers(CoarseProgram& program, Bytes bytes);

}  // namespace commscale

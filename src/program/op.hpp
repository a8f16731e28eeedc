#pragma once

// The step program: the contract between the plan and both engines (the CUDA/NCCL executor and the
// analytical event simulator), which consume it unchanged.
//
// A ProgramSet holds, for every world rank, an ordered list of ops. Ranks whose lists are identical
// (all ranks of one pipeline stage, when built from a plan) share one list: `programs` holds each
// distinct list once and RankProgram::program indexes it. That keeps a 1024-rank GPT-3 175B step at
// 16 lists rather than 1024 (see tests/bench). Everything that differs between ranks of a stage,
// the world ranks of their communication groups, lives in RankProgram::groups; ops name a group by
// its index there (its *handle*), and a point-to-point peer by its rank *within that group*, as
// NCCL's API does. `group_members()` and `world_peer()` resolve them to world ranks.
//
// Execution semantics (what "deadlock-free" means, and what engines must honour):
//  - Op ids are dense: ops[i].id == i. Dependencies name ops of the same rank.
//  - Each rank has seven streams. The ops of one stream run one at a time, in program order (the
//    order of the list); a stream's order is therefore an implicit dependency and is NOT repeated in
//    `deps`. `deps` lists what an op needs from other streams (and nothing else is implied).
//  - A collective runs when every member of its group has reached it; the members' calls on a group
//    are matched in program order (the k-th call of each member is one collective instance).
//    Collectives on one group are issued from one stream: an executor should create one
//    communicator per (group, stream).
//  - A send and a receive between two ranks on one group are matched in program order (the k-th
//    send from A to B is the k-th receive on B from A) and complete together (rendezvous).
//  - Bytes of a collective are its size as nccl-tests defines it (core/collective.hpp,
//    CollectiveLayout::size): the full tensor for all-reduce, the gathered output for all-gather,
//    the unreduced input for reduce-scatter. A collective's element count is bytes / sizeof(dtype).
//
// Stream names: "compute", "tp", "dp", "pp-send", "pp-recv", "h2d", "d2h". Compute ops (Gemm, MemoryKernel)
// run on "compute"; collectives on "tp" or "dp"; sends on "pp-send"; receives on "pp-recv"; copies between
// the GPU and host memory (HostCopy) on "h2d" or "d2h" by direction: a GPU has a copy engine each way, so
// they overlap compute and each other (PCIe is full duplex).

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/collective.hpp"
#include "core/dtype.hpp"
#include "core/plan_terms.hpp"
#include "core/units.hpp"

namespace commscale {

using OpId = std::uint32_t;

enum class Stream : std::uint8_t { kCompute, kTp, kDp, kPpSend, kPpRecv, kHostToDevice, kDeviceToHost };
inline constexpr int kStreamCount = 7;

// What part of the step an op belongs to. Recompute is a forward re-run inside the backward pass;
// kStep is the end of the step (gradient synchronisation that waits for the whole backward, the
// optimizer, the parameter all-gathers of ZeRO-1/2).
enum class Phase : std::uint8_t { kForward, kBackward, kRecompute, kStep };

// C[m x n] = A[m x k] * B[k x n], `batch` independent products (a strided-batched GEMM when > 1).
// flops = 2 * m * n * k * batch (a multiply-add is two operations).
struct Gemm {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  DataType dtype = DataType::kBFloat16;      // inputs and output; for an FP8 GEMM, A's type
  DataType accumulate = DataType::kFloat32;  // accumulator
  // An FP8 GEMM (dtype an FP8 type; TransformerEngine's, workload/fp8_ops.hpp) has inputs of two types and an
  // output of a third: B's type and the output's, read only then (gemm_b_type, gemm_out_type).
  DataType b_dtype = DataType::kBFloat16;
  DataType out_dtype = DataType::kBFloat16;
  Flops flops;
  // One of the products of a fused (flash) causal attention kernel: its shape is the causal share of
  // the full product (workload/layer_ops.hpp), and the predictor prices it at the attention kernel's
  // efficiency where a calibration profile has one.
  bool flash = false;
  // A later product of the same fused attention kernel (every product but the first in its phase): a
  // framework issues the kernel once, so its host cost is charged to the first (program/host_costs.hpp).
  bool flash_continued = false;
  // A product of a fused attention kernel that applies dropout to the probabilities (GPT-style models
  // train with it): such a kernel runs slower, and a profile's attention rows say whether they had it.
  bool flash_dropout = false;
  // A product of eager PyTorch's fused attention call (F.scaled_dot_product_attention, KernelSet::kEager):
  // without a profile's attention rows it takes SDPA's catalog figure (predict/compute_model.cpp).
  bool flash_sdpa = false;
  // A product of the backward attention kernel. Its first, the scores recomputed, is in the recompute
  // phase, but the framework issues it as the backward call (an SDPA backward costs the host twice the
  // forward's: results/h200x1-2026-12-03d section 6), so its host cost is the backward's.
  bool flash_backward = false;
};

enum class MemoryKernelKind : std::uint8_t {
  kNorm,          // LayerNorm or RMSNorm
  kSoftmax,       // scale + causal mask + softmax, fused as Megatron does
  kDropout,       // dropout (writes a one-byte mask)
  kActivation,    // GELU, or SwiGLU's silu(gate) * up
  kResidual,      // bias + dropout + residual add, fused as Megatron does
  kEmbedding,     // token (and position) embedding lookup, or its scatter-add backward
  kCrossEntropy,  // vocabulary-parallel softmax cross entropy
  kOptimizer,     // mixed-precision Adam update
  // The kernels an eager framework runs where Megatron-LM fuses (KernelSet::kEager):
  kCopy,      // a contiguous copy (a clone before an in-place op)
  kPermute,   // a copy that changes the layout (permute then contiguous, cat of strided views)
  kAdd,       // an elementwise sum: a residual, two gradients meeting, gradient accumulation
  kMask,      // masked_fill of the causal mask
  kBiasGrad,  // a bias gradient: the sum of the output gradient over the tokens
  // The optimizer's update run by the host (ZeRO-Offload): the gradients copied to host memory
  // (bytes_read), the CPU's update of `elements` parameters, the 16-bit weights copied back
  // (bytes_written); its bytes cross PCIe, not HBM (predict/compute_model.hpp prices it).
  kHostOptimizer,
};

// A memory-bound kernel: its time is the bytes it moves.
struct MemoryKernel {
  Bytes bytes_read;
  Bytes bytes_written;
  std::uint64_t elements = 0;  // elements of the main tensor it walks
  MemoryKernelKind kind = MemoryKernelKind::kResidual;
  KernelSet kernels = KernelSet::kFused;
};

struct CollectiveOp {
  Collective kind = Collective::kAllReduce;
  std::uint32_t group = 0;  // handle: index into RankProgram::groups
  Bytes bytes;              // nccl-tests "size" (see the header comment)
  DataType dtype = DataType::kBFloat16;
};

enum class P2pDirection : std::uint8_t { kSend, kRecv };

struct PointToPoint {
  P2pDirection direction = P2pDirection::kSend;
  std::uint32_t group = 0;  // handle: index into RankProgram::groups
  int peer = 0;             // the peer's rank within that group
  Bytes bytes;
  DataType dtype = DataType::kBFloat16;
};

enum class CopyDirection : std::uint8_t { kToHost, kToDevice };

// A copy between the GPU's memory and pinned host memory over the GPU's PCIe link, on "h2d" or "d2h":
// what offload moves during the step (the activations a layer keeps for its backward, out after its forward
// and back before its backward; ZeRO-Infinity's parameter shard before each gather). Engines run it as
// cudaMemcpyAsync from pinned memory (CUDA) or a memcpy (CPU backend); the predictor prices it at the
// host's PCIe rate (predict/compute_model.hpp, HostSide).
struct HostCopy {
  CopyDirection direction = CopyDirection::kToHost;
  Bytes bytes;
};

using OpPayload = std::variant<Gemm, MemoryKernel, CollectiveOp, PointToPoint, HostCopy>;

struct Op {
  OpId id = 0;
  Stream stream = Stream::kCompute;
  Phase phase = Phase::kForward;
  std::vector<OpId> deps;  // ops of other streams this one waits for
  std::string name;        // "L3.fwd.qkv", "mb2.fwd.send", "dp.bucket0.all_reduce", ...
  int microbatch = -1;     // -1 where not meaningful
  int layer = -1;          // global layer index, -1 where not meaningful
  OpPayload payload;
};

// What a communication group is for. The program builder gives each rank its groups in this order,
// so that a group's handle is its role's value (parallel/program_builder.hpp).
// kExpert and kExpertDp exist only in the programs of mixture-of-experts plans: the expert-parallel group
// (the dispatch and combine all-to-alls) and the expert-data-parallel group (the experts' gradients), laid
// out as Megatron-Core lays out its expert ranks (parallel/rank_layout.hpp, ExpertLayout).
// kContext exists only in the programs of context-parallel plans (cp > 1): the ranks that split one sequence,
// over which attention exchanges keys and values (workload/CONTEXT_PARALLEL.md); in those plans the data-parallel
// group is Megatron-Core's data-parallel group with context parallelism, dp x cp ranks.
// kExpertTp exists only in the programs of MoE plans with expert tensor parallelism (etp > 1): the ranks that
// split each local expert's fc1 and fc2, over which the dispatched rows are all-gathered before the experts and
// their outputs reduce-scattered after (workload/MOE.md).
enum class GroupRole : std::uint8_t {
  kTp,
  kDp,
  kPpForward,
  kPpBackward,
  kEmbedding,
  kExpert,
  kExpertDp,
  kContext,
  kExpertTp
};
inline constexpr int kGroupRoleCount = 9;

// What breakdowns and traffic tables charge host copies (HostCopy) to, beside the groups' names.
inline constexpr std::string_view kOffloadGroup = "offload";

// The pipeline's two directions: members listed by stage.
[[nodiscard]] constexpr bool is_pipeline(GroupRole role) noexcept {
  return role == GroupRole::kPpForward || role == GroupRole::kPpBackward;
}

// A communication group as one rank sees it. `members` are world ranks; a member's index in the list
// is its rank within the group. Every member lists the same members in the same order.
struct Group {
  GroupRole role = GroupRole::kTp;
  std::vector<int> members;
};

struct RankProgram {
  int rank = 0;
  int program = 0;  // index into ProgramSet::programs
  std::vector<Group> groups;
};

struct ProgramSet {
  int world_size = 0;
  std::vector<std::vector<Op>> programs;
  std::vector<RankProgram> ranks;  // ranks[r].rank == r
};

[[nodiscard]] std::string_view name(Stream stream) noexcept;  // compute tp dp pp-send pp-recv h2d d2h
[[nodiscard]] std::string_view name(Phase phase) noexcept;    // fwd bwd recompute step
[[nodiscard]] std::string_view name(MemoryKernelKind kind) noexcept;
[[nodiscard]] std::string_view name(P2pDirection direction) noexcept;  // send recv
[[nodiscard]] std::string_view name(CopyDirection direction) noexcept;  // to_host to_device
[[nodiscard]] std::string_view name(GroupRole role) noexcept;           // tp dp pp-fwd pp-bwd embedding ep edp cp etp
// The name the breakdown charges a group's time to: "pp" joins the pipeline's two directions.
[[nodiscard]] std::string_view charged_name(GroupRole role) noexcept;
// Inverses of the names above; throw InputError naming `where`.
[[nodiscard]] Stream parse_stream(std::string_view text, std::string_view where);
[[nodiscard]] Phase parse_phase(std::string_view text, std::string_view where);
[[nodiscard]] MemoryKernelKind parse_memory_kernel_kind(std::string_view text, std::string_view where);
[[nodiscard]] P2pDirection parse_p2p_direction(std::string_view text, std::string_view where);
[[nodiscard]] CopyDirection parse_copy_direction(std::string_view text, std::string_view where);
[[nodiscard]] GroupRole parse_group_role(std::string_view text, std::string_view where);

// The stream an op of this payload must run on is fixed for compute, point-to-point ops and host copies;
// a collective may run on "tp" or "dp".
[[nodiscard]] bool stream_fits_payload(Stream stream, const OpPayload& payload) noexcept;
[[nodiscard]] constexpr Stream copy_stream(CopyDirection direction) noexcept {
  return direction == CopyDirection::kToDevice ? Stream::kHostToDevice : Stream::kDeviceToHost;
}
[[nodiscard]] constexpr bool is_copy_stream(Stream stream) noexcept {
  return stream == Stream::kHostToDevice || stream == Stream::kDeviceToHost;
}
// Whether a report lists the stream for these ops: every stream but the two copy streams, which only offload
// uses, so that reports of plans without offload read as they did before the copies existed.
[[nodiscard]] bool listed_stream(const std::vector<Op>& ops, Stream stream) noexcept;

[[nodiscard]] Gemm make_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, DataType dtype);
// A GEMM's B and output types: dtype's, but for an FP8 GEMM.
[[nodiscard]] constexpr DataType gemm_b_type(const Gemm& g) noexcept { return is_fp8(g.dtype) ? g.b_dtype : g.dtype; }
[[nodiscard]] constexpr DataType gemm_out_type(const Gemm& g) noexcept {
  return is_fp8(g.dtype) ? g.out_dtype : g.dtype;
}
// The GEMM `g` with FP8 inputs a and b and an output of type `out`, fp32 accumulate.
[[nodiscard]] Gemm fp8_gemm(Gemm g, DataType a, DataType b, DataType out) noexcept;
// Whether any of `ops` is an FP8 GEMM (a plan with --fp8).
[[nodiscard]] bool has_fp8_gemm(const std::vector<Op>& ops) noexcept;
// Memory traffic of a GEMM if each operand is read once and the result written once (the roofline's
// minimum): (m k + k n) batch elements read (A's and B's types), m n batch written (the output's).
[[nodiscard]] Bytes gemm_bytes_read(const Gemm& g) noexcept;
[[nodiscard]] Bytes gemm_bytes_written(const Gemm& g) noexcept;

[[nodiscard]] inline const std::vector<Op>& ops_of(const ProgramSet& set, int rank) {
  return set.programs.at(static_cast<std::size_t>(set.ranks.at(static_cast<std::size_t>(rank)).program));
}
// The rank's op list, copied first if other ranks share it, so that it can be changed alone.
[[nodiscard]] std::vector<Op>& own_ops(ProgramSet& set, int rank);

// World ranks of the group a collective or point-to-point op names, and the world rank of a peer.
[[nodiscard]] const std::vector<int>& group_members(const RankProgram& rank, std::uint32_t handle);
[[nodiscard]] int world_peer(const RankProgram& rank, const PointToPoint& p2p);

}  // namespace commscale

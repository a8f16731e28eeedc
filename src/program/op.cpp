#include "program/op.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/names.hpp"

namespace commscale {
namespace {

constexpr std::array kStreams = {Stream::kCompute, Stream::kTp,           Stream::kDp,          Stream::kPpSend,
                                 Stream::kPpRecv,  Stream::kHostToDevice, Stream::kDeviceToHost};
static_assert(kStreams.size() == kStreamCount);
constexpr std::array kPhases = {Phase::kForward, Phase::kBackward, Phase::kRecompute, Phase::kStep};
constexpr std::array kKernelKinds = {MemoryKernelKind::kNorm,         MemoryKernelKind::kSoftmax,
                                     MemoryKernelKind::kDropout,      MemoryKernelKind::kActivation,
                                     MemoryKernelKind::kResidual,     MemoryKernelKind::kEmbedding,
                                     MemoryKernelKind::kCrossEntropy, MemoryKernelKind::kOptimizer,
                                     MemoryKernelKind::kCopy,         MemoryKernelKind::kPermute,
                                     MemoryKernelKind::kAdd,          MemoryKernelKind::kMask,
                                     MemoryKernelKind::kBiasGrad,     MemoryKernelKind::kHostOptimizer};
constexpr std::array kDirections = {P2pDirection::kSend, P2pDirection::kRecv};
constexpr std::array kCopyDirections = {CopyDirection::kToHost, CopyDirection::kToDevice};
constexpr std::array kGroupRoles = {GroupRole::kTp,         GroupRole::kDp,        GroupRole::kPpForward,
                                    GroupRole::kPpBackward, GroupRole::kEmbedding, GroupRole::kExpert,
                                    GroupRole::kExpertDp,   GroupRole::kContext,   GroupRole::kExpertTp};
static_assert(kGroupRoles.size() == kGroupRoleCount);

}  // namespace

std::string_view name(Stream stream) noexcept {
  switch (stream) {
    case Stream::kCompute:
      return "compute";
    case Stream::kTp:
      return "tp";
    case Stream::kDp:
      return "dp";
    case Stream::kPpSend:
      return "pp-send";
    case Stream::kPpRecv:
      return "pp-recv";
    case Stream::kHostToDevice:
      return "h2d";
    case Stream::kDeviceToHost:
      return "d2h";
  }
  return "?";
}

std::string_view name(Phase phase) noexcept {
  switch (phase) {
    case Phase::kForward:
      return "fwd";
    case Phase::kBackward:
      return "bwd";
    case Phase::kRecompute:
      return "recompute";
    case Phase::kStep:
      return "step";
  }
  return "?";
}

std::string_view name(MemoryKernelKind kind) noexcept {
  switch (kind) {
    case MemoryKernelKind::kNorm:
      return "norm";
    case MemoryKernelKind::kSoftmax:
      return "softmax";
    case MemoryKernelKind::kDropout:
      return "dropout";
    case MemoryKernelKind::kActivation:
      return "activation";
    case MemoryKernelKind::kResidual:
      return "residual";
    case MemoryKernelKind::kEmbedding:
      return "embedding";
    case MemoryKernelKind::kCrossEntropy:
      return "cross_entropy";
    case MemoryKernelKind::kOptimizer:
      return "optimizer";
    case MemoryKernelKind::kCopy:
      return "copy";
    case MemoryKernelKind::kPermute:
      return "permute";
    case MemoryKernelKind::kAdd:
      return "add";
    case MemoryKernelKind::kMask:
      return "mask";
    case MemoryKernelKind::kBiasGrad:
      return "bias_grad";
    case MemoryKernelKind::kHostOptimizer:
      return "host_optimizer";
  }
  return "?";
}

std::string_view name(P2pDirection direction) noexcept { return direction == P2pDirection::kSend ? "send" : "recv"; }

std::string_view name(CopyDirection direction) noexcept {
  return direction == CopyDirection::kToHost ? "to_host" : "to_device";
}

std::string_view name(GroupRole role) noexcept {
  switch (role) {
    case GroupRole::kTp:
      return "tp";
    case GroupRole::kDp:
      return "dp";
    case GroupRole::kPpForward:
      return "pp-fwd";
    case GroupRole::kPpBackward:
      return "pp-bwd";
    case GroupRole::kEmbedding:
      return "embedding";
    case GroupRole::kExpert:
      return "ep";
    case GroupRole::kExpertDp:
      return "edp";
    case GroupRole::kContext:
      return "cp";
    case GroupRole::kExpertTp:
      return "etp";
  }
  return "?";
}

std::string_view charged_name(GroupRole role) noexcept { return is_pipeline(role) ? "pp" : name(role); }

Stream parse_stream(std::string_view text, std::string_view where) {
  return parse_by_name(kStreams, text, where, "stream");
}
Phase parse_phase(std::string_view text, std::string_view where) {
  return parse_by_name(kPhases, text, where, "phase");
}
MemoryKernelKind parse_memory_kernel_kind(std::string_view text, std::string_view where) {
  return parse_by_name(kKernelKinds, text, where, "kernel kind");
}
P2pDirection parse_p2p_direction(std::string_view text, std::string_view where) {
  return parse_by_name(kDirections, text, where, "direction");
}
CopyDirection parse_copy_direction(std::string_view text, std::string_view where) {
  return parse_by_name(kCopyDirections, text, where, "copy direction");
}
GroupRole parse_group_role(std::string_view text, std::string_view where) {
  return parse_by_name(kGroupRoles, text, where, "group");
}

bool stream_fits_payload(Stream stream, const OpPayload& payload) noexcept {
  if (std::holds_alternative<Gemm>(payload) || std::holds_alternative<MemoryKernel>(payload)) {
    return stream == Stream::kCompute;
  }
  if (std::holds_alternative<CollectiveOp>(payload)) return stream == Stream::kTp || stream == Stream::kDp;
  if (const auto* h = std::get_if<HostCopy>(&payload)) return stream == copy_stream(h->direction);
  const auto* p2p = std::get_if<PointToPoint>(&payload);
  return p2p != nullptr && stream == (p2p->direction == P2pDirection::kSend ? Stream::kPpSend : Stream::kPpRecv);
}

bool listed_stream(const std::vector<Op>& ops, Stream stream) noexcept {
  return !is_copy_stream(stream) ||
         std::any_of(ops.begin(), ops.end(), [&](const Op& op) { return op.stream == stream; });
}

Gemm make_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, DataType dtype) {
  Gemm g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  g.dtype = dtype;
  g.accumulate = DataType::kFloat32;
  g.flops = Flops(2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                  static_cast<double>(batch));
  return g;
}

Gemm fp8_gemm(Gemm g, DataType a, DataType b, DataType out) noexcept {
  g.dtype = a;
  g.b_dtype = b;
  g.out_dtype = out;
  g.accumulate = DataType::kFloat32;
  return g;
}

bool has_fp8_gemm(const std::vector<Op>& ops) noexcept {
  return std::any_of(ops.begin(), ops.end(), [](const Op& op) {
    const auto* g = std::get_if<Gemm>(&op.payload);
    return g != nullptr && is_fp8(g->dtype);
  });
}

Bytes gemm_bytes_read(const Gemm& g) noexcept {
  return Bytes(static_cast<std::uint64_t>(g.m * g.k * g.batch) * size_of(g.dtype) +
               static_cast<std::uint64_t>(g.k * g.n * g.batch) * size_of(gemm_b_type(g)));
}

Bytes gemm_bytes_written(const Gemm& g) noexcept {
  return Bytes(static_cast<std::uint64_t>(g.m * g.n * g.batch) * size_of(gemm_out_type(g)));
}

std::vector<Op>& own_ops(ProgramSet& set, int rank) {
  RankProgram& r = set.ranks.at(static_cast<std::size_t>(rank));
  int sharers = 0;
  for (const RankProgram& other : set.ranks) sharers += other.program == r.program ? 1 : 0;
  if (sharers > 1) {
    set.programs.push_back(set.programs.at(static_cast<std::size_t>(r.program)));
    r.program = static_cast<int>(set.programs.size() - 1);
  }
  return set.programs[static_cast<std::size_t>(r.program)];
}

const std::vector<int>& group_members(const RankProgram& rank, std::uint32_t handle) {
  if (handle >= rank.groups.size()) {
    throw std::out_of_range(fmt::format("rank {} has no group handle {}", rank.rank, handle));
  }
  return rank.groups[handle].members;
}

int world_peer(const RankProgram& rank, const PointToPoint& p2p) {
  const std::vector<int>& members = group_members(rank, p2p.group);
  if (p2p.peer < 0 || static_cast<std::size_t>(p2p.peer) >= members.size()) {
    throw std::out_of_range(fmt::format("rank {}: peer {} is outside group {}", rank.rank, p2p.peer, p2p.group));
  }
  return members[static_cast<std::size_t>(p2p.peer)];
}

}  // namespace commscale

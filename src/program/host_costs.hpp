#pragma once

// The host side of a step: a framework's issuing thread spends host (CPU) time on every op before the
// GPU can start it (a CUDA launch, a cuBLASLt call, an NCCL call; for an eager framework also Python,
// the dispatcher and autograd), and may block where the framework synchronises. Both engines use one
// description: the predictor's simulator issues each rank's ops in program order at these costs, and
// `train --host-framework` spins the host for the same costs before issuing each op, so that a step
// bound by its host can be measured and predicted alike.
//
// Costs are per op class and phase; an op's class is what its payload is (a GEMM, a memory-bound
// kernel, a collective, a point-to-point transfer, or one fused attention call: the first product of a
// flash kernel), its phase the program's (recompute counts as forward: an eager framework re-runs its
// forward code; but a backward attention kernel's products, the scores it recomputes first among them,
// are one backward call).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/units.hpp"
#include "program/op.hpp"

namespace commscale {

// kAttention: one call of a fused attention kernel (PyTorch's SDPA with its autograd node, flash-attn),
// charged to the kernel's first product (a Gemm with flash and not flash_continued). Its figure is
// optional in a host row: a phase without one charges the call what a GEMM call costs there.
enum class HostOpClass : std::uint8_t { kGemm, kKernel, kCollective, kP2p, kAttention };
inline constexpr int kHostOpClassCount = 5;
enum class HostPhase : std::uint8_t { kForward, kBackward, kStep };
inline constexpr int kHostPhaseCount = 3;

// Where the host waits for the GPU inside a step.
enum class HostSync : std::uint8_t {
  kNone,             // never inside the step (commscale's executor, PyTorch without a loss readback)
  kBeforeOptimizer,  // before the first op of the step phase, the host waits for every op issued
                     // before it to complete (Megatron-LM's gradient-norm and inf checks read a
                     // value back to the host there)
};

// How a framework issues a fused attention kernel that the program counts as several products
// (Gemm::flash_continued).
enum class AttentionIssue : std::uint8_t {
  kPerKernel,   // one call for the kernel: its host cost is charged to its first product only (PyTorch's
                // SDPA, flash-attn under Megatron-LM)
  kPerProduct,  // one call per product (commscale's own executor runs each as a cuBLASLt GEMM)
};

struct HostCosts {
  std::string framework;  // "commscale", "pytorch-eager", "megatron", or a name a profile gives
  std::string source;     // who measured it, how, on what host
  // Host time to issue one op: [phase][class]. The attention class's figure of a phase counts only where
  // attention_given says the row has one (else the phase's GEMM figure stands for it: issue_cost).
  std::array<std::array<Seconds, kHostOpClassCount>, kHostPhaseCount> issue{};
  std::array<bool, kHostPhaseCount> attention_given{};
  Seconds step;  // once per step, before the first op (the training loop, zero_grad, a barrier)
  HostSync sync = HostSync::kNone;
  // After each run of pipeline sends and receives the host waits for every op issued before it to
  // complete: Megatron's batched isend/irecv is followed by torch.cuda.synchronize() (batch_p2p_sync,
  // on by default in Megatron-LM and Megatron-DeepSpeed), so its host cannot run ahead of the GPU there.
  bool sync_after_p2p = false;
  AttentionIssue attention = AttentionIssue::kPerKernel;

  // No cost and no synchronisation: the host issues every op at once (device time alone).
  [[nodiscard]] bool zero() const noexcept;
};

// kAttention for a flash kernel's first product, whatever the framework (issue_cost decides what it
// costs); kGemm for any other product, a later one of a flash kernel included.
[[nodiscard]] HostOpClass host_op_class(const Gemm& gemm) noexcept;
[[nodiscard]] HostOpClass host_op_class(const OpPayload& payload) noexcept;
[[nodiscard]] HostPhase host_phase(Phase phase) noexcept;
// An op's host phase: its phase's, but the backward for every product of the backward attention kernel
// (Gemm::flash_backward), the first of which is in the recompute phase.
[[nodiscard]] HostPhase host_phase(Phase phase, const OpPayload& payload) noexcept;
[[nodiscard]] HostPhase host_phase(Phase phase, const Gemm* gemm) noexcept;  // null: not a GEMM
[[nodiscard]] Seconds issue_cost(const HostCosts& costs, const Op& op) noexcept;
// A profile row's default: per product for commscale's own executor, per kernel for any other framework.
[[nodiscard]] AttentionIssue default_attention_issue(std::string_view framework) noexcept;
// Host time to issue an op of `phase` and class `c`. `continued`: a later product of a fused attention
// kernel (Gemm::flash_continued). Where the framework issues the kernel as one call (kPerKernel) the
// first product costs the attention figure (the GEMM figure where the row has none for the phase) and
// the later ones nothing; where it issues each product (kPerProduct) every product is a GEMM call.
[[nodiscard]] inline Seconds issue_cost(const HostCosts& costs, HostPhase phase, HostOpClass c,
                                        bool continued = false) noexcept {
  const auto p = static_cast<std::size_t>(phase);
  if (c == HostOpClass::kAttention &&
      (costs.attention == AttentionIssue::kPerProduct || !costs.attention_given[p])) {
    c = HostOpClass::kGemm;
  }
  if (continued && costs.attention == AttentionIssue::kPerKernel) return Seconds(0.0);
  return costs.issue[p][static_cast<std::size_t>(c)];
}
// Whether an op is a later product of a fused attention kernel.
[[nodiscard]] bool continues_attention_kernel(const OpPayload& payload) noexcept;

[[nodiscard]] std::string_view name(HostOpClass c) noexcept;  // gemm kernel collective p2p attention
[[nodiscard]] std::string_view name(HostPhase p) noexcept;    // fwd bwd step
[[nodiscard]] std::string_view name(HostSync s) noexcept;     // none before_optimizer
[[nodiscard]] std::string_view name(AttentionIssue a) noexcept;  // kernel product
// Inverses; throw InputError naming `where`.
[[nodiscard]] HostOpClass parse_host_op_class(std::string_view text, std::string_view where);
[[nodiscard]] HostPhase parse_host_phase(std::string_view text, std::string_view where);
[[nodiscard]] HostSync parse_host_sync(std::string_view text, std::string_view where);
[[nodiscard]] AttentionIssue parse_attention_issue(std::string_view text, std::string_view where);

}  // namespace commscale

#include "program/host_costs.hpp"

#include <array>

#include "core/names.hpp"

namespace commscale {
namespace {

constexpr std::array kClasses = {HostOpClass::kGemm, HostOpClass::kKernel, HostOpClass::kCollective,
                                 HostOpClass::kP2p, HostOpClass::kAttention};
constexpr std::array kHostPhases = {HostPhase::kForward, HostPhase::kBackward, HostPhase::kStep};
constexpr std::array kSyncs = {HostSync::kNone, HostSync::kBeforeOptimizer};
constexpr std::array kAttentionIssues = {AttentionIssue::kPerKernel, AttentionIssue::kPerProduct};

}  // namespace

bool HostCosts::zero() const noexcept {
  if (step.value() != 0.0 || sync != HostSync::kNone || sync_after_p2p) return false;
  for (const auto& phase : issue) {
    for (const Seconds s : phase) {
      if (s.value() != 0.0) return false;
    }
  }
  return true;
}

HostOpClass host_op_class(const Gemm& gemm) noexcept {
  return gemm.flash && !gemm.flash_continued ? HostOpClass::kAttention : HostOpClass::kGemm;
}

HostOpClass host_op_class(const OpPayload& payload) noexcept {
  switch (payload.index()) {
    case 0: return host_op_class(std::get<Gemm>(payload));
    case 1: return HostOpClass::kKernel;
    case 2: return HostOpClass::kCollective;
    case 3: return HostOpClass::kP2p;
    default: return HostOpClass::kKernel;  // a host copy: one call that enqueues, as a kernel's launch
  }
}

HostPhase host_phase(Phase phase) noexcept {
  switch (phase) {
    case Phase::kForward:
    case Phase::kRecompute: return HostPhase::kForward;
    case Phase::kBackward: return HostPhase::kBackward;
    case Phase::kStep: return HostPhase::kStep;
  }
  return HostPhase::kStep;
}

HostPhase host_phase(Phase phase, const Gemm* gemm) noexcept {
  return gemm != nullptr && gemm->flash_backward ? HostPhase::kBackward : host_phase(phase);
}

HostPhase host_phase(Phase phase, const OpPayload& payload) noexcept {
  return host_phase(phase, std::get_if<Gemm>(&payload));
}

bool continues_attention_kernel(const OpPayload& payload) noexcept {
  const auto* g = std::get_if<Gemm>(&payload);
  return g != nullptr && g->flash_continued;
}

Seconds issue_cost(const HostCosts& costs, const Op& op) noexcept {
  return issue_cost(costs, host_phase(op.phase, op.payload), host_op_class(op.payload),
                    continues_attention_kernel(op.payload));
}

AttentionIssue default_attention_issue(std::string_view framework) noexcept {
  return framework == "commscale" ? AttentionIssue::kPerProduct : AttentionIssue::kPerKernel;
}

std::string_view name(HostOpClass c) noexcept {
  switch (c) {
    case HostOpClass::kGemm: return "gemm";
    case HostOpClass::kKernel: return "kernel";
    case HostOpClass::kCollective: return "collective";
    case HostOpClass::kP2p: return "p2p";
    case HostOpClass::kAttention: return "attention";
  }
  return "?";
}

std::string_view name(HostPhase p) noexcept {
  switch (p) {
    case HostPhase::kForward: return "fwd";
    case HostPhase::kBackward: return "bwd";
    case HostPhase::kStep: return "step";
  }
  return "?";
}

std::string_view name(HostSync s) noexcept {
  switch (s) {
    case HostSync::kNone: return "none";
    case HostSync::kBeforeOptimizer: return "before_optimizer";
  }
  return "?";
}

std::string_view name(AttentionIssue a) noexcept {
  switch (a) {
    case AttentionIssue::kPerKernel: return "kernel";
    case AttentionIssue::kPerProduct: return "product";
  }
  return "?";
}

HostOpClass parse_host_op_class(std::string_view text, std::string_view where) {
  return parse_by_name(kClasses, text, where, "op class");
}
HostPhase parse_host_phase(std::string_view text, std::string_view where) {
  return parse_by_name(kHostPhases, text, where, "phase");
}
HostSync parse_host_sync(std::string_view text, std::string_view where) {
  return parse_by_name(kSyncs, text, where, "host synchronisation");
}
AttentionIssue parse_attention_issue(std::string_view text, std::string_view where) {
  return parse_by_name(kAttentionIssues, text, where, "attention issue");
}

}  // namespace commscale

#include "core/plan_terms.hpp"

#include <array>

#include "core/names.hpp"

namespace commscale {
namespace {

constexpr std::array kSchedules = {ScheduleKind::kGpipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved};
constexpr std::array kRecomputeModes = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
constexpr std::array kKernelSets = {KernelSet::kFused, KernelSet::kEager};
constexpr std::array kOptimizers = {Optimizer::kAdam, Optimizer::kAdamW, Optimizer::kSgd, Optimizer::kNone};

}  // namespace

std::string_view name(ScheduleKind s) noexcept {
  switch (s) {
    case ScheduleKind::kGpipe:
      return "gpipe";
    case ScheduleKind::k1F1B:
      return "1f1b";
    case ScheduleKind::kInterleaved:
      return "interleaved";
  }
  return "?";
}

std::string_view name(Recompute r) noexcept {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

std::string_view name(KernelSet kernels) noexcept { return kernels == KernelSet::kEager ? "eager" : "fused"; }

std::string_view name(Optimizer o) noexcept {
  switch (o) {
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kAdamW:
      return "adamw";
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kNone:
      return "none";
  }
  return "?";
}

ScheduleKind parse_schedule(std::string_view text, std::string_view where) {
  return parse_by_name(kSchedules, text, where, "schedule");
}

Recompute parse_recompute(std::string_view text, std::string_view where) {
  return parse_by_name(kRecomputeModes, text, where, "recompute mode");
}

KernelSet parse_kernel_set(std::string_view text, std::string_view where) {
  return parse_by_name(kKernelSets, text, where, "kernel set");
}

Optimizer parse_optimizer(std::string_view text, std::string_view where) {
  return parse_by_name(kOptimizers, text, where, "optimizer");
}

}  // namespace commscale

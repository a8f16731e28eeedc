#include "core/plan_terms.hpp"

#include <array>

#include "core/names.hpp"

namespace commscale {
namespace {

constexpr std::array kSchedules = {ScheduleKind::kGpipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved};
constexpr std::array kRecomputeModes = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
constexpr std::array kKernelSets = {KernelSet::kFused, KernelSet::kEager};
constexpr std::array kOptimizers = {Optimizer::kAdam, Optimizer::kAdamW, Optimizer::kAdam8bit, Optimizer::kSgd,
                                    Optimizer::kNone};
constexpr std::array kOffloadDevices = {OffloadDevice::kNone, OffloadDevice::kCpu};
constexpr std::array kLoraTargets = {LoraTargets::kQv, LoraTargets::kQkvo, LoraTargets::kAll};
constexpr std::array kFp8Recipes = {Fp8Recipe::kNone, Fp8Recipe::kDelayed, Fp8Recipe::kCurrent, Fp8Recipe::kBlock};
constexpr std::array kCpCommTypes = {CpCommType::kP2p, CpCommType::kAllGather};

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
    case Optimizer::kAdam8bit:
      return "adam8bit";
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kNone:
      return "none";
  }
  return "?";
}

std::string_view name(OffloadDevice d) noexcept { return d == OffloadDevice::kCpu ? "cpu" : "none"; }

std::string_view name(LoraTargets t) noexcept {
  switch (t) {
    case LoraTargets::kQv:
      return "qv";
    case LoraTargets::kQkvo:
      return "qkvo";
    case LoraTargets::kAll:
      return "all";
  }
  return "?";
}

std::string_view name(Fp8Recipe r) noexcept {
  switch (r) {
    case Fp8Recipe::kNone:
      return "none";
    case Fp8Recipe::kDelayed:
      return "delayed";
    case Fp8Recipe::kCurrent:
      return "current";
    case Fp8Recipe::kBlock:
      return "block";
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

LoraTargets parse_lora_targets(std::string_view text, std::string_view where) {
  return parse_by_name(kLoraTargets, text, where, "LoRA target set");
}

OffloadDevice parse_offload_device(std::string_view text, std::string_view where) {
  return parse_by_name(kOffloadDevices, text, where, "offload device");
}

Fp8Recipe parse_fp8_recipe(std::string_view text, std::string_view where) {
  return parse_by_name(kFp8Recipes, text, where, "FP8 recipe");
}

std::string_view name(CpCommType c) noexcept { return c == CpCommType::kAllGather ? "all_gather" : "p2p"; }

CpCommType parse_cp_comm_type(std::string_view text, std::string_view where) {
  return parse_by_name(kCpCommTypes, text, where, "context-parallel communication type");
}

}  // namespace commscale

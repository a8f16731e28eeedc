#include "parallel/framework.hpp"

#include <array>
#include <string>

#include "core/error.hpp"

namespace commscale {
namespace {

// Megatron-LM (Megatron-Core's DDP, megatron/core/distributed): gradients accumulate in one contiguous
// buffer that is its own bucket (no copies), reduced after the last microbatch's backward unless
// --overlap-grad-reduce (off by default); fused kernels; flash attention (TransformerEngine's fused attention,
// --attention-backend auto; a run without it says --no-flash-attn); Adam with fp32 master weights (FusedAdam).
// Megatron-DeepSpeed: Megatron's model code under DeepSpeed's engine: the same kernels, attention as separate
// kernels unless --use-flash-attn-v2, DeepSpeed's reduction after the backward (overlap_comm off by default)
// and Adam; no gradient-accumulation fusion: in bf16 its BF16_Optimizer adds each microbatch's gradients into
// fp32 ones and all-reduces them whole, in bf16, before its sharded update (workload/op_list.hpp,
// GradAccumulation; grad_sync.cpp). PyTorch DDP: eager kernels,
// F.scaled_dot_product_attention (flash), buckets of 25 MiB reduced as the backward hooks fire, each
// gradient copied into its bucket and back (gradient_as_bucket_view off by default); AdamW. PyTorch FSDP:
// eager, flash, parameters and gradients sharded (ZeRO 3), reduce-scatter per layer during the backward (its
// flat parameter's gradient is reduced in place: no bucket copies); AdamW. commscale: its own executor (`train`),
// which reduces its gradient buffer in place. Megatron-DeepSpeed's ZeRO-0 reduction flattens gradients too
// (not modelled: off).
constexpr std::array kFrameworks = {
    FrameworkDefaults{Framework::kMegatronLm, "megatron-lm", "megatron", KernelSet::kFused, true, Optimizer::kAdam,
                      false, false, 0, "fused kernels, gradients reduced after the backward, Adam"},
    FrameworkDefaults{Framework::kMegatronDeepSpeed, "megatron-deepspeed", "megatron", KernelSet::kFused, false,
                      Optimizer::kAdam, false, false, 0,
                      "Megatron's fused kernels under DeepSpeed, gradients reduced after the "
                      "backward (bf16: accumulated in fp32, all-reduced whole), Adam"},
    FrameworkDefaults{Framework::kPytorchDdp, "pytorch-ddp", "pytorch-eager", KernelSet::kEager, true,
                      Optimizer::kAdamW, true, true, 0,
                      "eager kernels, SDPA attention, 25 MiB buckets reduced during the backward, AdamW"},
    FrameworkDefaults{Framework::kPytorchFsdp, "pytorch-fsdp", "pytorch-eager", KernelSet::kEager, true,
                      Optimizer::kAdamW, true, false, 3,
                      "eager kernels, SDPA attention, fully sharded (ZeRO 3), AdamW"},
    FrameworkDefaults{Framework::kCommscale, "commscale", "commscale", KernelSet::kFused, true, Optimizer::kAdam, true,
                      false, 0,
                      "its own executor (train): cuBLASLt GEMMs and its kernels, buckets during the backward"},
};

}  // namespace

std::span<const FrameworkDefaults> frameworks() noexcept { return kFrameworks; }

const FrameworkDefaults& defaults_of(Framework f) noexcept { return kFrameworks[static_cast<std::size_t>(f)]; }

std::string_view name(Framework f) noexcept { return defaults_of(f).name; }

DataType gradient_reduction_type(Framework f, DataType dtype) noexcept {
  return f == Framework::kMegatronLm && dtype == DataType::kBFloat16 ? DataType::kFloat32 : dtype;
}

std::string framework_text(Framework f, DataType dtype) {
  return std::string(name(f)) + ": " + std::string(defaults_of(f).why) + "; data-parallel reduction in " +
         std::string(name(gradient_reduction_type(f, dtype)));
}

Framework parse_framework(std::string_view text, std::string_view where) {
  std::string names;
  for (const FrameworkDefaults& d : kFrameworks) {
    if (d.name == text) return d.framework;
    names += names.empty() ? "" : ", ";
    names += d.name;
  }
  throw InputError(std::string(where), "unknown framework '" + std::string(text) + "'", "one of " + names);
}

}  // namespace commscale

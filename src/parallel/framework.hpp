#pragma once

// The training framework a step is run by: what a user means by "a Megatron-LM job" or "PyTorch DDP".
// One word (--framework) sets what that framework does by default and commscale's flags would otherwise
// leave at commscale's own choices: its kernels (Megatron's fused ones or eager PyTorch's), whether
// attention is a flash kernel unless told, the host that issues the ops (a row of
// topologies/frameworks.json), whether the data-parallel gradient reduction overlaps the backward, its ZeRO
// stage and the optimizer. A flag given beside it still wins.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/dtype.hpp"
#include "core/plan_terms.hpp"

namespace commscale {

enum class Framework : std::uint8_t { kMegatronLm, kMegatronDeepSpeed, kPytorchDdp, kPytorchFsdp, kCommscale };

struct FrameworkDefaults {
  Framework framework;
  std::string_view name;      // as --framework takes it
  std::string_view host_row;  // its host costs: a row of topologies/frameworks.json
  KernelSet kernels;
  bool flash_attention;  // without --flash-attn / --no-flash-attn
  Optimizer optimizer;
  bool overlap_grad_reduce;  // data-parallel reduction in buckets during the backward (else after it)
  // Each gradient copied into its flat bucket before the all-reduce and the result copied back after it
  // (PyTorch DDP without gradient_as_bucket_view): memory kernels on the compute stream.
  bool gradient_bucket_copies;
  int zero_stage;        // without --zero
  std::string_view why;  // one line: what it runs, for the output
};

// Megatron-LM: what commscale's plans (tp, pp, sp, interleaving, the distributed optimizer) come from, what
// the published large-model runs used, and what NeMo and most multi-GPU LLM training stacks build on.
inline constexpr Framework kDefaultFramework = Framework::kMegatronLm;

[[nodiscard]] std::span<const FrameworkDefaults> frameworks() noexcept;
[[nodiscard]] const FrameworkDefaults& defaults_of(Framework f) noexcept;
// Throws InputError naming `where` and the frameworks it takes.
[[nodiscard]] Framework parse_framework(std::string_view text, std::string_view where);
[[nodiscard]] std::string_view name(Framework f) noexcept;
// The type a model of `dtype`'s data-parallel gradients are reduced in: fp32 under Megatron-LM in bf16 (its fp32
// main_grad buffer, grad_sync.cpp), else the model's. commscale's executor (`train`) reduces bf16 gradients in
// bf16, so a plan as Megatron-LM runs it moves twice the bytes per reduction of the same plan trained here.
[[nodiscard]] DataType gradient_reduction_type(Framework f, DataType dtype) noexcept;
// The reports' one line on the framework: "megatron-lm: fused kernels, ..., Adam; data-parallel reduction in fp32".
[[nodiscard]] std::string framework_text(Framework f, DataType dtype);

}  // namespace commscale

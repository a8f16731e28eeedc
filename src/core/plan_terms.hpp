#pragma once

// The words a parallel plan is written in, in one place: how a pipeline is scheduled, what the backward
// recomputes, whose kernels the memory-bound ops stand for, and the optimizer that ends the step. They live in core because the step
// program's ops (program/op.hpp) carry a kernel set, the workload's layers are built per recompute
// mode and kernel set, and the plan (parallel/plan.hpp) holds all three.

#include <cstdint>
#include <string_view>

namespace commscale {

// The pipeline schedule (parallel/schedule.hpp): GPipe, 1F1B, or interleaved 1F1B with model chunks.
enum class ScheduleKind : std::uint8_t { kGpipe, k1F1B, kInterleaved };

// What the backward pass re-runs of the forward: nothing, the attention core (Megatron-LM's selective
// recompute), or each layer's whole forward.
enum class Recompute : std::uint8_t { kNone, kSelective, kFull };

// Whose kernels a memory-bound op stands for: Megatron-LM's fused ones (what commscale runs by
// default), or an eager framework's, one kernel per tensor operation (PyTorch without torch.compile).
// Calibration keeps the two apart: PyTorch's softmax is not commscale's.
enum class KernelSet : std::uint8_t { kFused, kEager };

// The optimizer a step ends with (workload/layer_ops.hpp prices it, workload/memory.hpp sizes its states):
//   adam   mixed-precision Adam: fp32 master weights and moments, 12 bytes a parameter (Megatron-LM's,
//          ZeRO's 16 Psi);
//   adamw  AdamW on the weights' own type (PyTorch's torch.optim.AdamW on bf16 parameters): two moments
//          of the weights' type, no master copy;
//   sgd    plain SGD (PyTorch's default, no momentum): no state;
//   none   no optimizer step at all (forward and backward only, as benchmarks run them).
enum class Optimizer : std::uint8_t { kAdam, kAdamW, kSgd, kNone };

[[nodiscard]] std::string_view name(ScheduleKind s) noexcept;  // gpipe 1f1b interleaved
[[nodiscard]] std::string_view name(Recompute r) noexcept;     // none selective full
[[nodiscard]] std::string_view name(KernelSet kernels) noexcept;  // fused eager
[[nodiscard]] std::string_view name(Optimizer o) noexcept;        // adam adamw sgd none

// Inverses of the names above; throw InputError naming `where` and the accepted words.
[[nodiscard]] ScheduleKind parse_schedule(std::string_view text, std::string_view where);
[[nodiscard]] Recompute parse_recompute(std::string_view text, std::string_view where);
[[nodiscard]] KernelSet parse_kernel_set(std::string_view text, std::string_view where);
[[nodiscard]] Optimizer parse_optimizer(std::string_view text, std::string_view where);

}  // namespace commscale

#pragma once

// The words a parallel plan is written in, in one place: how a pipeline is scheduled, what the backward
// recomputes, whose kernels the memory-bound ops stand for, and the optimizer that ends the step. They live in core because the step
// program's ops (program/op.hpp) carry a kernel set, the workload's layers are built per recompute
// mode and kernel set, and the plan (parallel/plan.hpp) holds all three.

#include <compare>
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
//   adam8bit  bitsandbytes' Adam8bit (Dettmers et al. 2022, arXiv 2110.02861): both moments in 8 bits,
//          quantized block-wise with an fp32 absmax per block of kAdam8bitBlock parameters, and in 16-bit
//          training the fp32 master weight kept as mixed-precision training with bitsandbytes does
//          (4 + 1 + 1 bytes a parameter, plus 8 bytes of scales per block);
//   sgd    plain SGD (PyTorch's default, no momentum): no state;
//   none   no optimizer step at all (forward and backward only, as benchmarks run them).
enum class Optimizer : std::uint8_t { kAdam, kAdamW, kAdam8bit, kSgd, kNone };
// Parameters per block of adam8bit's block-wise quantization: bitsandbytes' optimizer blocksize (256 in
// bitsandbytes/optim/optimizer.py; the paper's experiments used 2048), one fp32 absmax per moment per block.
inline constexpr std::uint64_t kAdam8bitBlock = 256;

// Where ZeRO-Offload / ZeRO-Infinity keep a kind of model state (DeepSpeed's offload_optimizer.device and
// offload_param.device): in GPU memory (none) or in the host's (cpu). NVMe is not modelled.
enum class OffloadDevice : std::uint8_t { kNone, kCpu };

// How context-parallel ranks exchange the keys and values of attention (Megatron-Core's --cp-comm-type,
// src/workload/CONTEXT_PARALLEL.md): p2p, a ring of send/receive steps each overlapped with a block of
// attention (TransformerEngine's AttnFuncWithCPAndKVP2P), or all_gather, the whole sequence's keys and values
// gathered before attention and their gradients reduce-scattered after (AttnFuncWithCPAndKVAllGather).
enum class CpCommType : std::uint8_t { kP2p, kAllGather };

// LoRA (Hu et al. 2021, arXiv 2106.09685) and QLoRA (Dettmers et al. 2023, arXiv 2305.14314): the base
// weights frozen, a trainable low-rank pair A (in x r), B (r x out) beside each targeted linear layer, whose
// output adds x A B to the layer's. The linear layers it targets, by Hugging Face PEFT's module names:
//   qv    q_proj and v_proj (the LoRA paper's choice, PEFT's default for Llama);
//   qkvo  the attention's four projections;
//   all   every linear layer of a block: the attention's four and the MLP's (QLoRA's choice).
enum class LoraTargets : std::uint8_t { kQv, kQkvo, kAll };

// FP8 training of the linear layers' GEMMs as TransformerEngine runs them (te.fp8_autocast with a recipe;
// Megatron-LM's --fp8-format hybrid with --fp8-recipe): E4M3 activations and weights forward, E5M2 gradients
// backward, each FP8 tensor with an fp32 scale. The recipe is how the scales are found:
//   none     no FP8: the linear layers run in the model's dtype;
//   delayed  DelayedScaling: each scale from a history of earlier amaxes; the histories are all-reduced
//            (max) once per microbatch's forward over the amax-reduction group (Megatron-LM's tp x dp (x cp));
//   current  Float8CurrentScaling: each tensor's amax computed just before its cast (a reduction kernel),
//            all-reduced over tp for a sequence-parallel input;
//   block    Float8BlockScaling / MXFP8: a scale per block of 128 (or 32) values, computed inside the cast;
//            no amax reductions.
enum class Fp8Recipe : std::uint8_t { kNone, kDelayed, kCurrent, kBlock };

struct LoraSpec {
  int rank = 0;        // r; 0: no LoRA, every weight trains
  int base_bits = 16;  // the frozen base's linear weights: 16 (the model dtype) or 4 (QLoRA's NF4)
  LoraTargets targets = LoraTargets::kQv;
  [[nodiscard]] bool enabled() const noexcept { return rank > 0; }
  friend auto operator<=>(const LoraSpec&, const LoraSpec&) = default;
};

[[nodiscard]] std::string_view name(ScheduleKind s) noexcept;  // gpipe 1f1b interleaved
[[nodiscard]] std::string_view name(Recompute r) noexcept;     // none selective full
[[nodiscard]] std::string_view name(KernelSet kernels) noexcept;  // fused eager
[[nodiscard]] std::string_view name(Optimizer o) noexcept;        // adam adamw adam8bit sgd none
[[nodiscard]] std::string_view name(OffloadDevice d) noexcept;    // none cpu
[[nodiscard]] std::string_view name(LoraTargets t) noexcept;      // qv qkvo all
[[nodiscard]] std::string_view name(Fp8Recipe r) noexcept;        // none delayed current block
[[nodiscard]] std::string_view name(CpCommType c) noexcept;       // p2p all_gather

// Inverses of the names above; throw InputError naming `where` and the accepted words.
[[nodiscard]] ScheduleKind parse_schedule(std::string_view text, std::string_view where);
[[nodiscard]] Recompute parse_recompute(std::string_view text, std::string_view where);
[[nodiscard]] KernelSet parse_kernel_set(std::string_view text, std::string_view where);
[[nodiscard]] Optimizer parse_optimizer(std::string_view text, std::string_view where);
[[nodiscard]] OffloadDevice parse_offload_device(std::string_view text, std::string_view where);
[[nodiscard]] LoraTargets parse_lora_targets(std::string_view text, std::string_view where);
[[nodiscard]] Fp8Recipe parse_fp8_recipe(std::string_view text, std::string_view where);
[[nodiscard]] CpCommType parse_cp_comm_type(std::string_view text, std::string_view where);

}  // namespace commscale

#pragma once

// The ops of one transformer layer (or the embedding, the head, the optimizer) as one
// tensor-parallel rank runs them for one microbatch: compute ops with exact GEMM shapes or memory
// traffic, and the tensor-parallel collectives between them. The program builder stamps these lists
// once per (layer, microbatch) of a pipeline stage.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/collective.hpp"
#include "core/plan_terms.hpp"
#include "program/op.hpp"

namespace commscale {

// How each microbatch's weight gradients join the step's accumulated ones (layer_ops.cpp prices them):
//   in_gemm        the weight-gradient GEMM accumulates into them (Megatron-LM's gradient_accumulation_fusion,
//                  its default since 2022-02; commscale's executor): no kernel of its own;
//   autograd_add   autograd's AccumulateGrad adds each microbatch's gradients into .grad, of the weights'
//                  type, every microbatch but the first (eager PyTorch; Megatron-LM before that fusion);
//   main_grad_add  Megatron-LM with --no-gradient-accumulation-fusion: its DDP hook adds .grad into main_grad
//                  every microbatch (megatron/core/distributed/distributed_data_parallel.py,
//                  _make_backward_post_hook: param.main_grad.add_(param.grad.data)), main_grad fp32 in bf16
//                  training (arguments.py: accumulate_allreduce_grads_in_fp32), else of the weights' type;
//   deepspeed      Megatron-DeepSpeed under DeepSpeed's engine (no fusion): in bf16 its BF16_Optimizer casts
//                  each microbatch's .grad to fp32 and adds it into its fp32 gradients, every microbatch
//                  (deepspeed/runtime/bf16_optimizer.py update_hp_grads, called from the pipeline engine's
//                  _exec_backward_pass); in fp16 autograd adds them (as autograd_add).
enum class GradAccumulation : std::uint8_t { kInGemm, kAutogradAdd, kMainGradAdd, kDeepSpeed };

// How a layer is split and run: what the per-op costs depend on beyond the model.
struct LayerSharding {
  int micro_batch = 1;
  int tp = 1;
  bool sequence_parallel = false;  // norms, dropouts and residuals split along the sequence (needs tp > 1)
  bool flash_attention = false;    // fused attention: no s x s matrix in memory; backward recomputes QK^T
  Recompute recompute = Recompute::kNone;
  KernelSet kernels = KernelSet::kFused;  // Megatron-LM's fused kernels, or eager PyTorch's (layer_ops.hpp)
  LoraSpec lora;                          // frozen base weights and low-rank adapters (layer_ops.hpp), off by default
  GradAccumulation grad_accumulation = GradAccumulation::kInGemm;
  int ep = 1;   // expert-parallel ranks an MoE layer's routed experts are split over (layer_ops.hpp)
  int etp = 1;  // expert-tensor-parallel ranks each routed expert's fc1 and fc2 are split over (layer_ops.hpp)
  Fp8Recipe fp8 = Fp8Recipe::kNone;  // the linear layers' GEMMs in FP8 and the recipe's casts (workload/fp8_ops.hpp)
  bool fp8_dispatch = false;         // with fp8: the MoE dispatch all-to-all's rows in FP8 with their scales
  // Context-parallel ranks a sequence is split over (CONTEXT_PARALLEL.md): every op runs on seq / cp tokens,
  // attention exchanges keys and values over the context-parallel group as cp_comm says.
  int cp = 1;
  CpCommType cp_comm = CpCommType::kP2p;
  friend auto operator<=>(const LayerSharding&, const LayerSharding&) = default;
};

// A collective inside a layer: over the tensor-parallel group, for an MoE layer's dispatch and combine the
// expert-parallel group (and with expert tensor parallelism the expert-tensor-parallel group), for
// context-parallel attention the context-parallel group; bytes as nccl-tests counts them (op.hpp).
struct LayerCollective {
  Collective kind = Collective::kAllReduce;
  Bytes bytes;
  DataType dtype = DataType::kBFloat16;
  GroupRole group = GroupRole::kTp;
};

struct WorkloadOp {
  std::string name;  // relative to its layer and phase: "qkv", "attn.scores", "mlp.fc1.dgrad"
  Phase phase = Phase::kForward;
  std::variant<Gemm, MemoryKernel, LayerCollective> payload;
  std::vector<int> deps;              // earlier ops of this list, on another stream, that it waits for
  std::uint64_t grad_parameters = 0;  // parameters whose gradients this op completes (backward)
  bool expert_grads = false;          // ... and they are routed experts' (reduced over the expert-data-parallel group)
};
using OpList = std::vector<WorkloadOp>;

// Appends ops with the dependency rules the lists share: a collective waits for the compute op
// before it (its producer); a compute op waits for the collectives it names.
class OpListBuilder {
 public:
  explicit OpListBuilder(Phase phase) : phase_(phase) {}
  void set_phase(Phase phase) noexcept { phase_ = phase; }
  int compute(std::string name, Gemm gemm, std::vector<int> deps = {});
  int compute(std::string name, MemoryKernel kernel, std::vector<int> deps = {});
  // Returns -1 (and adds nothing) when `enabled` is false, so callers can list it as a dependency.
  int collective(bool enabled, std::string name, LayerCollective c);
  // A collective that waits for no compute op (a prefetch, e.g. the sequence-parallel re-gather).
  int prefetch(bool enabled, std::string name, LayerCollective c);
  // Marks the op at `index` (the last one added) as completing the gradients of `parameters`. With
  // gradient accumulation on, an eager add of those gradients into the accumulated ones follows it and
  // completes them instead. `experts`: they are routed experts' parameters.
  void set_grad_parameters(int index, std::uint64_t parameters, bool experts = false);
  // Where a framework adds each microbatch's weight gradients to the accumulated ones in kernels of its own
  // (GradAccumulation): an optional cast to the accumulator's type, then the add (bytes per element of a
  // gradient). Megatron-LM's weight-gradient GEMMs accumulate: none.
  struct Accumulation {
    double cast_read = 0.0;  // 0: no cast
    double cast_written = 0.0;
    double add_read = 0.0;  // 0: no kernel at all
    double add_written = 0.0;
  };
  void accumulate_gradients(Accumulation a) noexcept { accumulation_ = a; }
  [[nodiscard]] OpList take() { return std::move(ops_); }

 private:
  int add(WorkloadOp op);
  Phase phase_;
  OpList ops_;
  int last_compute_ = -1;
  Accumulation accumulation_;  // add_read 0: gradients are not accumulated by a kernel of their own
};

// A memory kernel over `elements` elements reading and writing the given bytes per element.
[[nodiscard]] MemoryKernel memory_kernel(MemoryKernelKind kind, std::uint64_t elements, double read_per_element,
                                         double written_per_element);
// The same, as an eager framework's kernel (KernelSet::kEager).
[[nodiscard]] MemoryKernel eager_kernel(MemoryKernelKind kind, std::uint64_t elements, double read_per_element,
                                        double written_per_element);

[[nodiscard]] Flops gemm_flops(const OpList& ops);

}  // namespace commscale

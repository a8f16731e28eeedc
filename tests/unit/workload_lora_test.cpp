// LoRA and QLoRA: adapter parameter counts against PEFT's, the NF4 base's bytes, the backward without
// the base's weight gradients, and the memory of a LoRA plan.

#include <gtest/gtest.h>

#include <variant>

#include "parallel/plan_memory.hpp"
#include "workload/flops.hpp"
#include "workload/layer_ops.hpp"
#include "workload/lora.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

LoraSpec lora(int rank, LoraTargets targets, int bits = 16) {
  LoraSpec l;
  l.rank = rank;
  l.targets = targets;
  l.base_bits = bits;
  return l;
}

TEST(Lora, AdapterParametersAsPeftCountsThem) {
  // Llama-2-7B: h 4096, a = g = 32 heads, F 11008, 32 layers; r (in + out) per targeted matrix.
  const TransformerConfig m = find_preset("llama2-7b", "");
  // q, v at r 8: 32 x 2 x 8 x (4096 + 4096) = 4,194,304 (PEFT's print_trainable_parameters for the LoRA
  // paper's setting); at r 16 twice that, 8,388,608.
  EXPECT_EQ(32 * lora_layer_parameters(m, lora(8, LoraTargets::kQv)), 4194304u);
  EXPECT_EQ(32 * lora_layer_parameters(m, lora(16, LoraTargets::kQv)), 8388608u);
  // Every linear layer at r 16: 4 x 16 x 8192 + 3 x 16 x (4096 + 11008) = 1,249,280 a layer, 39,976,960.
  EXPECT_EQ(32 * lora_layer_parameters(m, lora(16, LoraTargets::kAll)), 39976960u);
  EXPECT_EQ(lora_linears(m, LoraTargets::kQkvo).size(), 4u);
  EXPECT_EQ(lora_layer_parameters(m, LoraSpec{}), 0u);
}

TEST(Lora, Nf4BaseBytes) {
  // A Llama-2-7B block's four matrices, 202,375,168 weights: 16-bit 404,750,336 bytes; NF4 n/2 + n/64
  // absmax bytes + 4 bytes per 256 absmax, matrix by matrix: 104,399,104 bytes (0.516 bytes a weight).
  const TransformerConfig m = find_preset("llama2-7b", "");
  EXPECT_EQ(lora_base_linear_bytes(m, lora(16, LoraTargets::kQv)).count(), 404750336u);
  EXPECT_EQ(lora_base_linear_bytes(m, lora(16, LoraTargets::kQv, 4)).count(), 104399104u);
}

TEST(Lora, BackwardHasNoBaseWeightGradients) {
  const TransformerConfig m = find_preset("llama2-7b", "");
  LayerSharding s;
  s.flash_attention = true;
  const OpList plain = layer_backward_ops(m, s);
  s.lora = lora(16, LoraTargets::kQv);
  const OpList tuned = layer_backward_ops(m, s);
  std::uint64_t grads = 0;
  for (const WorkloadOp& op : tuned) {
    grads += op.grad_parameters;
    EXPECT_NE(op.name, "qkv.wgrad");
    EXPECT_NE(op.name, "mlp.fc2.wgrad");
  }
  // Only the adapters' gradients reach the data-parallel reduction (norms frozen too).
  EXPECT_EQ(grads, lora_layer_parameters(m, s.lora));
  // FLOPs: the base's weight-gradient GEMMs go, 2 T x 202,375,168 (T = 4096 tokens), and each adapter's
  // four backward GEMMs come, 4 T r (in + out) for q and v: 2 x 4 x 4096 x 16 x 8192.
  const double t = 4096;
  const double expected = gemm_flops(plain).value() - 2 * t * 202375168.0 + 2 * 4 * t * 16 * 8192;
  EXPECT_DOUBLE_EQ(gemm_flops(tuned).value(), expected);
  // Forward: two GEMMs per adapter, 2 T r (in + out) in all.
  LayerSharding f;
  f.flash_attention = true;
  const double base = gemm_flops(layer_forward_ops(m, f)).value();
  f.lora = s.lora;
  EXPECT_DOUBLE_EQ(gemm_flops(layer_forward_ops(m, f)).value(), base + 2 * 2 * t * 16 * 8192);
}

TEST(Lora, QloraDequantizesEachBaseGemm) {
  const TransformerConfig m = find_preset("llama2-7b", "");
  LayerSharding s;
  s.flash_attention = true;
  s.lora = lora(16, LoraTargets::kAll, 4);
  int forward = 0;
  for (const WorkloadOp& op : layer_forward_ops(m, s)) forward += op.name.ends_with(".dequant") ? 1 : 0;
  int backward = 0;
  for (const WorkloadOp& op : layer_backward_ops(m, s)) backward += op.name.ends_with(".dequant") ? 1 : 0;
  EXPECT_EQ(forward, 4);   // qkv, attn.proj, mlp.fc1, mlp.fc2
  EXPECT_EQ(backward, 4);  // again before each data-gradient GEMM
  // Each reads the NF4 weight (0.5 + 1/64 + 4/(64 x 256) bytes a weight) and writes it in bf16: over the
  // block's 202,375,168 weights 104,399,104 bytes read (as Nf4BaseBytes, every matrix a whole number of
  // blocks) and 404,750,336 written.
  std::uint64_t read = 0;
  std::uint64_t written = 0;
  for (const WorkloadOp& op : layer_forward_ops(m, s)) {
    if (!op.name.ends_with(".dequant")) continue;
    const auto& k = std::get<MemoryKernel>(op.payload);
    read += k.bytes_read.count();
    written += k.bytes_written.count();
  }
  EXPECT_EQ(read, 104399104u);
  EXPECT_EQ(written, 404750336u);
}

TEST(Lora, ModelFlopsDropTheBaseWeightGradients) {
  // Llama-2-7B (b 1, s 4096, l 32, h 4096, a = g = 32, F 11008, V 32000), x = b s l h^2 = 2,199,023,255,552.
  // Megatron-LM's 12 x [(1 + g/a) + 1.5 F/h + V/(2 l h) + s/h] = 12 x (6.1533203125 + 1) = 1.887638e14.
  // LoRA r 8 on q, v: 12 x s/h + 8 x 6.1533203125 (weights without their gradient) + 6 b s l x 131,072
  // adapter parameters a layer = 2.638828e13 + 1.082500e14 + 1.030792e11 = 1.347417e14.
  const TransformerConfig m = find_preset("llama2-7b", "");
  const double x = 2199023255552.0;
  const double weights = 2.0 + 1.5 * 11008.0 / 4096.0 + 32000.0 / (2.0 * 32 * 4096);
  EXPECT_DOUBLE_EQ(model_flops(m, LoraSpec{}, 1).value(), megatron_model_flops(m, 1).value());
  EXPECT_DOUBLE_EQ(megatron_model_flops(m, 1).value(), 12.0 * x * (weights + 1.0));
  const double lora_flops = 12.0 * x + 8.0 * x * weights + 6.0 * 4096 * 32 * 131072.0;
  EXPECT_DOUBLE_EQ(model_flops(m, lora(8, LoraTargets::kQv), 1).value(), lora_flops);
  EXPECT_NEAR(lora_flops, 1.347417e14, 1e8);
  EXPECT_DOUBLE_EQ(model_flops(m, lora(8, LoraTargets::kQv), 4).value(), 4 * lora_flops);
}

TEST(Lora, PlanMemoryTrainsOnlyTheAdapters) {
  // Llama-2-7B, r 16 on q, v, Adam, one GPU: the base's 16-bit weights (6,738,415,616 x 2 bytes) and the
  // adapters' 2 + 2 + 12 bytes a parameter (8,388,608 of them).
  const TransformerConfig m = find_preset("llama2-7b", "");
  ParallelPlan p;
  p.flash_attention = true;
  p.lora = lora(16, LoraTargets::kQv);
  const auto stages = memory_per_stage(m, p, MemoryOptions{});
  const std::uint64_t adapters = 8388608;
  EXPECT_EQ(stages[0].trainable, adapters);
  EXPECT_EQ(stages[0].parameters, 6738415616u + adapters);
  EXPECT_EQ(stages[0].bytes.weights.count(), 2 * 6738415616u + 2 * adapters);
  EXPECT_EQ(stages[0].bytes.gradients.count(), 2 * adapters);
  EXPECT_EQ(stages[0].bytes.optimizer.count(), 12 * adapters);
  // QLoRA: the blocks' linear weights in NF4 (32 x 104,399,104 bytes), the norms (2 x 4096 a layer), the
  // embedding, the output layer (2 x 32000 x 4096) and the final norm (4096) 16-bit.
  p.lora.base_bits = 4;
  const auto q = memory_per_stage(m, p, MemoryOptions{});
  const std::uint64_t others = 32 * 2 * 4096 + 2 * 32000 * 4096 + 4096;
  EXPECT_EQ(q[0].bytes.weights.count(), 32 * 104399104u + 2 * others + 2 * adapters);
}

}  // namespace
}  // namespace commscale

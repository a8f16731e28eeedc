// Per-op costs of a layer, the head and the optimizer against hand-computed values and the closed-form
// FLOP counts of Narayanan et al. 2021, Korthikanti et al. 2022 and Megatron-LM.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <variant>

#include <fmt/format.h>

#include "workload/flops.hpp"
#include "workload/layer_ops.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

// Pointers into `ops`: keep the list alive while they are used.
std::map<std::string, const WorkloadOp*> by_name(const OpList& ops) {
  std::map<std::string, const WorkloadOp*> out;
  for (const WorkloadOp& op : ops) out[op.name] = &op;
  return out;
}

double list_flops(const OpList& ops) { return gemm_flops(ops).value(); }

LayerSharding sharding(int micro_batch, int tp, bool sp = false, Recompute r = Recompute::kNone, bool flash = false) {
  LayerSharding s;
  s.micro_batch = micro_batch;
  s.tp = tp;
  s.sequence_parallel = sp;
  s.recompute = r;
  s.flash_attention = flash;
  return s;
}

TEST(LayerOps, Gpt3_175bForwardLayerFlopsByHand) {
  // B = 1, s = 2048, h = 12288: 24 B s h^2 + 4 B s^2 h
  //   = 24 * 2048 * 150994944 + 4 * 4194304 * 12288 = 7421703487488 + 206158430208 = 7627861917696.
  const TransformerConfig m = find_preset("gpt3-175b", "");
  EXPECT_DOUBLE_EQ(list_flops(layer_forward_ops(m, sharding(1, 1))), 7627861917696.0);
  EXPECT_DOUBLE_EQ(gpt_layer_forward_flops(m, 1).value(), 7627861917696.0);
  // Backward is twice the forward; t ranks each run 1/t of it.
  EXPECT_DOUBLE_EQ(list_flops(layer_backward_ops(m, sharding(1, 1))), 2 * 7627861917696.0);
  EXPECT_DOUBLE_EQ(list_flops(layer_forward_ops(m, sharding(1, 8))), 7627861917696.0 / 8);
}

TEST(LayerOps, Gpt3_175bGemmShapesAtTp8) {
  // Tokens T = B s = 2 * 2048 = 4096; a/t = 12 heads of d = 128 per rank.
  const OpList list = layer_forward_ops(find_preset("gpt3-175b", ""), sharding(2, 8));
  const auto ops = by_name(list);  // points into `list`, which must outlive it (ASan found a temporary here)
  const Gemm& qkv = std::get<Gemm>(ops.at("qkv")->payload);
  EXPECT_EQ(qkv.m, 4096);
  EXPECT_EQ(qkv.n, 3 * 12288 / 8);
  EXPECT_EQ(qkv.k, 12288);
  const Gemm& scores = std::get<Gemm>(ops.at("attn.scores")->payload);
  EXPECT_EQ(scores.batch, 2 * 12);
  EXPECT_EQ(scores.m, 2048);
  EXPECT_EQ(scores.n, 2048);
  EXPECT_EQ(scores.k, 128);
  const Gemm& fc2 = std::get<Gemm>(ops.at("mlp.fc2")->payload);
  EXPECT_EQ(fc2.n, 12288);
  EXPECT_EQ(fc2.k, 4 * 12288 / 8);
  EXPECT_EQ(fc2.accumulate, DataType::kFloat32);
  // fc2 reads X (4096 x 6144) and W (6144 x 12288), writes Y (4096 x 12288), 2 bytes each.
  EXPECT_EQ(gemm_bytes_read(fc2).count(), 2ull * (4096 * 6144 + 6144 * 12288));
  EXPECT_EQ(gemm_bytes_written(fc2).count(), 2ull * 4096 * 12288);
  // The softmax walks B a/t s^2 = 2 * 12 * 2048^2 elements, reading and writing 2 bytes each.
  const MemoryKernel& softmax = std::get<MemoryKernel>(ops.at("attn.softmax")->payload);
  EXPECT_EQ(softmax.elements, 2ull * 12 * 2048 * 2048);
  EXPECT_EQ(softmax.bytes_read.count(), 2 * softmax.elements);
  EXPECT_EQ(softmax.bytes_written.count(), 2 * softmax.elements);
  // The all-reduce after the projection carries the whole hidden state: T h 2 bytes.
  const LayerCollective& ar = std::get<LayerCollective>(ops.at("attn.all_reduce")->payload);
  EXPECT_EQ(ar.kind, Collective::kAllReduce);
  EXPECT_EQ(ar.bytes.count(), 4096ull * 12288 * 2);
}

TEST(LayerOps, SequenceParallelReplacesAllReducesWithGatherAndScatter) {
  const TransformerConfig m = find_preset("gpt3-175b", "");
  const auto count = [](const OpList& ops, Collective kind) {
    int n = 0;
    for (const WorkloadOp& op : ops) {
      const auto* c = std::get_if<LayerCollective>(&op.payload);
      n += c != nullptr && c->kind == kind ? 1 : 0;
    }
    return n;
  };
  const OpList fwd = layer_forward_ops(m, sharding(1, 8));
  const OpList bwd = layer_backward_ops(m, sharding(1, 8));
  EXPECT_EQ(count(fwd, Collective::kAllReduce), 2);  // Megatron: two all-reduces forward, two backward
  EXPECT_EQ(count(bwd, Collective::kAllReduce), 2);
  const OpList fwd_sp = layer_forward_ops(m, sharding(1, 8, true));
  const OpList bwd_sp = layer_backward_ops(m, sharding(1, 8, true));
  EXPECT_EQ(count(fwd_sp, Collective::kAllGather), 2);
  EXPECT_EQ(count(fwd_sp, Collective::kReduceScatter), 2);
  EXPECT_EQ(count(fwd_sp, Collective::kAllReduce), 0);
  // Backward: the gradients' all-gathers and reduce-scatters, plus the re-gathers of the norm outputs.
  EXPECT_EQ(count(bwd_sp, Collective::kAllGather), 4);
  EXPECT_EQ(count(bwd_sp, Collective::kReduceScatter), 2);
  // Norms run on T/t tokens with sequence parallelism.
  EXPECT_EQ(std::get<MemoryKernel>(by_name(fwd_sp).at("ln1")->payload).elements, 2048ull * 12288 / 8);
  // No collectives at all without tensor parallelism.
  EXPECT_EQ(count(layer_forward_ops(m, sharding(1, 1)), Collective::kAllReduce), 0);
}

TEST(StepFlops, NarayananFormulaForGpt3_175b) {
  // One step of B = 1536 sequences (Narayanan et al.'s 175B run):
  // 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) with s/(6h) = 2048/73728 and V/(12 l h) = 51200/14155776.
  const TransformerConfig m = find_preset("gpt3-175b", "");
  const double base = 72.0 * 1536 * 2048 * 96 * 150994944.0;
  const double expected = base * (1 + 2048.0 / 73728 + 51200.0 / 14155776);
  EXPECT_DOUBLE_EQ(narayanan_flops(m, 1536).value(), expected);
  EXPECT_NEAR(expected, 3.386e18, 0.001e18);
  // The same from the ops: per sequence, l layers forward + backward, logits forward + backward.
  const LayerSharding one = sharding(1, 1);
  const double per_sequence = 96 * (list_flops(layer_forward_ops(m, one)) + list_flops(layer_backward_ops(m, one))) +
                              list_flops(head_forward_ops(m, one)) + list_flops(head_backward_ops(m, one, 1));
  EXPECT_NEAR(1536 * per_sequence / expected, 1.0, 1e-12);
  // Megatron-LM's general form agrees for GPT (g = a, F = 4h, GELU).
  EXPECT_NEAR(megatron_model_flops(m, 1536).value() / expected, 1.0, 1e-12);
}

TEST(StepFlops, FullRecomputeAddsOneForwardPerLayer) {
  // 96 B s l h^2 (1 + s/(6h) + V/(16 l h)): the layers' 72 + 24 (one more forward), logits unchanged.
  const TransformerConfig m = find_preset("gpt3-175b", "");
  const LayerSharding full = sharding(1, 1, false, Recompute::kFull);
  const double per_sequence = 96 * (list_flops(layer_forward_ops(m, full)) + list_flops(layer_backward_ops(m, full))) +
                              list_flops(head_forward_ops(m, full)) + list_flops(head_backward_ops(m, full, 1));
  EXPECT_NEAR(per_sequence / narayanan_full_recompute_flops(m, 1).value(), 1.0, 1e-12);
}

TEST(StepFlops, SelectiveRecomputeAndFlashAddAttentionGemmsOnly) {
  // Selective recompute re-runs QK^T and PV: 2 * 2 B s^2 h per layer. (Korthikanti et al.'s appendix,
  // arXiv 2205.05198, prints 72 B s l h^2 (1 + s/(3h) + ...), i.e. 12 B s^2 h more per layer: that is
  // three times what re-running the two attention GEMMs costs, so it is not what the ops count.)
  const TransformerConfig m = find_preset("gpt3-175b", "");
  const double s = 2048, h = 12288;
  const double plain = list_flops(layer_backward_ops(m, sharding(1, 1)));
  EXPECT_DOUBLE_EQ(list_flops(layer_backward_ops(m, sharding(1, 1, false, Recompute::kSelective))) - plain,
                   4 * s * s * h);
  // Flash attention's backward recomputes QK^T once and runs its four gradient products, each over the
  // causal share of the keys, (s + 128) / 2 = 1088 at s = 2048 (FlashAttention-2's 128-row tiles):
  // 5 x 2 B s 1088 h, where the unfused backward's four products run over all s keys: 4 x 2 B s^2 h.
  const double keys = (s + 128) / 2;
  EXPECT_DOUBLE_EQ(list_flops(layer_backward_ops(m, sharding(1, 1, false, Recompute::kNone, true))) - plain,
                   5 * 2 * s * keys * h - 4 * 2 * s * s * h);
  // Forward: the two products over the causal share instead of all keys.
  EXPECT_DOUBLE_EQ(list_flops(layer_forward_ops(m, sharding(1, 1))) -
                       list_flops(layer_forward_ops(m, sharding(1, 1, false, Recompute::kNone, true))),
                   2 * 2 * s * (s - keys) * h);
  EXPECT_DOUBLE_EQ(flash_attention_flops(2048, 96, 128, false).value(), 2 * 2 * s * keys * h);
  EXPECT_DOUBLE_EQ(flash_attention_flops(2048, 96, 128, true).value(), 5 * 2 * s * keys * h);
  EXPECT_EQ(flash_causal_keys(64), 64);  // shorter than one tile: every key
}

TEST(StepFlops, MegatronGeneralFormCoversGqaAndSwiglu) {
  // LLaMA-2 70B: 12 B s l h^2 [(1 + g/a + s/h) + (F/h) 1.5 + V/(2 l h)], against the ops.
  const TransformerConfig m = find_preset("llama2-70b", "");
  const LayerSharding one = sharding(1, 1);
  const double per_sequence = 80 * (list_flops(layer_forward_ops(m, one)) + list_flops(layer_backward_ops(m, one))) +
                              list_flops(head_forward_ops(m, one)) + list_flops(head_backward_ops(m, one, 1));
  const double h = 8192, s = 4096, l = 80;
  const double formula = 12 * s * l * h * h * ((1 + 8.0 / 64 + s / h) + 28672 / h * 1.5 + 32000 / (2 * l * h));
  EXPECT_NEAR(per_sequence / formula, 1.0, 1e-12);
  EXPECT_NEAR(megatron_model_flops(m, 1).value() / formula, 1.0, 1e-12);
}

TEST(LayerOps, GradientsOfEveryParameterAreProducedOnce) {
  for (const char* preset : {"gpt3-1.3b", "llama3-8b", "tiny"}) {
    const TransformerConfig m = find_preset(preset, "");
    for (int tp : {1, 2, 4}) {
      const LayerSharding s = sharding(1, tp, tp > 1);
      std::uint64_t grads = 0;
      for (const WorkloadOp& op : layer_backward_ops(m, s)) grads += op.grad_parameters;
      EXPECT_EQ(grads, layer_parameters(m, tp).total()) << preset << " tp " << tp;
      std::uint64_t head = 0;
      for (const WorkloadOp& op : head_backward_ops(m, s, 2)) head += op.grad_parameters;
      EXPECT_EQ(head, norm_parameters(m) + output_parameters(m, tp, 2)) << preset;
    }
  }
}

// Eager kernels change only the memory-bound kernels: the GEMMs, the collectives and the gradients
// they complete stay; every microbatch after the first adds its weight gradients once more.
TEST(LayerOps, EagerKernelsKeepGemmsCollectivesAndGradients) {
  const auto count = [](const OpList& ops, const auto& keep) {
    int n = 0;
    for (const WorkloadOp& op : ops) n += keep(op) ? 1 : 0;
    return n;
  };
  const auto is_collective = [](const WorkloadOp& op) { return std::holds_alternative<LayerCollective>(op.payload); };
  const auto is_accumulate = [](const WorkloadOp& op) { return op.name.ends_with(".accumulate"); };
  for (const char* preset : {"gpt3-1.3b", "llama3-8b"}) {
    const TransformerConfig m = find_preset(preset, "");
    for (int tp : {1, 4}) {
      for (bool flash : {false, true}) {
        const LayerSharding fused = sharding(2, tp, tp > 1, Recompute::kSelective, flash);
        LayerSharding eager = fused;
        eager.kernels = KernelSet::kEager;
        const std::string what = std::string(preset) + " tp " + std::to_string(tp) + (flash ? " flash" : "");
        for (bool accumulate : {false, true}) {
          const OpList f = layer_backward_ops(m, fused, accumulate);
          const OpList e = layer_backward_ops(m, eager, accumulate);
          EXPECT_DOUBLE_EQ(list_flops(e), list_flops(f)) << what;
          EXPECT_EQ(count(e, is_collective), count(f, is_collective)) << what;
          for (const OpList* list : {&f, &e}) {  // unique in their phase: reports and timelines key ops by them
            std::set<std::string> names;
            for (const WorkloadOp& op : *list) {
              EXPECT_TRUE(names.insert(std::string(name(op.phase)) + "." + op.name).second) << what << " " << op.name;
            }
          }
          std::uint64_t grads = 0;
          std::uint64_t accumulated = 0;
          for (const WorkloadOp& op : e) {
            grads += op.grad_parameters;
            if (!is_accumulate(op)) continue;
            accumulated += std::get<MemoryKernel>(op.payload).elements;
            EXPECT_EQ(op.grad_parameters, std::get<MemoryKernel>(op.payload).elements) << what << " " << op.name;
          }
          EXPECT_EQ(grads, layer_parameters(m, tp).total()) << what;
          EXPECT_EQ(accumulated, accumulate ? layer_parameters(m, tp).total() : 0) << what;
          EXPECT_EQ(count(f, is_accumulate), 0) << what;  // Megatron-LM's wgrad GEMMs accumulate in place
        }
        const OpList fwd = layer_forward_ops(m, eager);
        EXPECT_DOUBLE_EQ(list_flops(fwd), list_flops(layer_forward_ops(m, fused))) << what;
        // Eager PyTorch runs more kernels than Megatron-LM's fused ones where dropout adds its own
        // (Llama has none, and with flash attention its eager and fused lists are as long).
        if (m.dropout) {
          EXPECT_GT(fwd.size(), layer_forward_ops(m, fused).size()) << what;
        }
        for (const WorkloadOp& op : fwd) {
          if (const auto* k = std::get_if<MemoryKernel>(&op.payload)) {
            EXPECT_EQ(k->kernels, KernelSet::kEager) << what << " " << op.name;
          }
        }
      }
    }
  }
}

// Where a framework adds each microbatch's weight gradients in kernels of their own (op_list.hpp,
// GradAccumulation), by hand for GPT-3 125M at tp 1: a layer holds 12 h^2 + 13 h = 12 * 589824 + 13 * 768
// = 7,087,872 parameters.
//   main_grad_add (Megatron-LM, no fusion), every microbatch: read the 16-bit .grad and main_grad, write main_grad:
//     bf16 (main_grad fp32): 2 + 4 read, 4 written; fp16 (main_grad fp16): 2 + 2 read, 2 written;
//   deepspeed, bf16 (BF16_Optimizer.update_hp_grads), every microbatch: a cast (2 read, 4 written), then an fp32
//     add (8 read, 4 written); fp16: autograd's add (2 + 2 read, 2 written), every microbatch but the first;
//   in_gemm (Megatron-LM's fusion): none.
TEST(LayerOps, GradientAccumulationKernelsByHand) {
  constexpr double kLayer = 7087872;
  struct Case {
    GradAccumulation g;
    DataType dtype;
    bool later;
    double cast_read, cast_written, add_read, add_written;  // bytes per parameter
  };
  const Case cases[] = {
      {GradAccumulation::kMainGradAdd, DataType::kBFloat16, false, 0, 0, 6, 4},
      {GradAccumulation::kMainGradAdd, DataType::kBFloat16, true, 0, 0, 6, 4},
      {GradAccumulation::kMainGradAdd, DataType::kFloat16, true, 0, 0, 4, 2},
      {GradAccumulation::kDeepSpeed, DataType::kBFloat16, false, 2, 4, 8, 4},
      {GradAccumulation::kDeepSpeed, DataType::kBFloat16, true, 2, 4, 8, 4},
      {GradAccumulation::kDeepSpeed, DataType::kFloat16, false, 0, 0, 0, 0},
      {GradAccumulation::kDeepSpeed, DataType::kFloat16, true, 0, 0, 4, 2},
      {GradAccumulation::kInGemm, DataType::kBFloat16, true, 0, 0, 0, 0},
  };
  for (const Case& c : cases) {
    TransformerConfig m = find_preset("gpt3-125m", "");
    m.dtype = c.dtype;
    LayerSharding s = sharding(1, 1, false, Recompute::kFull);
    s.grad_accumulation = c.g;
    const std::string what = fmt::format("mode {} dtype {} later {}", static_cast<int>(c.g), name(c.dtype), c.later);
    double cast_read = 0, cast_written = 0, add_read = 0, add_written = 0, add_elements = 0;
    std::uint64_t grads = 0;
    for (const WorkloadOp& op : layer_backward_ops(m, s, c.later)) {
      grads += op.grad_parameters;
      const auto* k = std::get_if<MemoryKernel>(&op.payload);
      if (op.name.ends_with(".to_fp32")) {
        cast_read += static_cast<double>(k->bytes_read.count());
        cast_written += static_cast<double>(k->bytes_written.count());
        EXPECT_EQ(op.grad_parameters, 0u) << what;  // the add after it completes the gradients
      }
      if (op.name.ends_with(".accumulate")) {
        add_read += static_cast<double>(k->bytes_read.count());
        add_written += static_cast<double>(k->bytes_written.count());
        add_elements += static_cast<double>(k->elements);
        EXPECT_EQ(op.grad_parameters, k->elements) << what;
      }
    }
    EXPECT_EQ(grads, 7087872u) << what;  // every gradient completed once, by its GEMM or its add
    EXPECT_EQ(add_elements, c.add_read > 0 ? kLayer : 0.0) << what;
    EXPECT_EQ(cast_read, c.cast_read * kLayer) << what;
    EXPECT_EQ(cast_written, c.cast_written * kLayer) << what;
    EXPECT_EQ(add_read, c.add_read * kLayer) << what;
    EXPECT_EQ(add_written, c.add_written * kLayer) << what;
  }
}

TEST(LayerOps, EagerAttentionByHand) {
  // gpt3-1.3b (h = 2048, 16 heads, s = 2048), B = 2, t = 2: 16 (B a/t) score matrices of s^2.
  const TransformerConfig m = find_preset("gpt3-1.3b", "");
  LayerSharding s = sharding(2, 2);
  s.kernels = KernelSet::kEager;
  const OpList list = layer_forward_ops(m, s);
  const auto ops = by_name(list);
  const std::uint64_t scores = 2ull * 8 * 2048 * 2048;
  for (const char* kernel : {"attn.mask.copy", "attn.mask", "attn.softmax"}) {
    const MemoryKernel& k = std::get<MemoryKernel>(ops.at(kernel)->payload);
    EXPECT_EQ(k.elements, scores) << kernel;
    EXPECT_EQ(k.bytes_read.count(), 2 * scores) << kernel;
    EXPECT_EQ(k.bytes_written.count(), 2 * scores) << kernel;
  }
  // Dropout writes its output and a one-byte mask.
  EXPECT_EQ(std::get<MemoryKernel>(ops.at("attn.dropout")->payload).bytes_written.count(), 3 * scores);
  // The context goes back from (B a/t, s, d) to (s, B, h/t): one permuting copy of T h/t elements.
  const MemoryKernel& permute = std::get<MemoryKernel>(ops.at("attn.context.permute")->payload);
  EXPECT_EQ(permute.kind, MemoryKernelKind::kPermute);
  EXPECT_EQ(permute.elements, 2ull * 2048 * 2048 / 2);
}

TEST(LayerOps, BareStackHasNoEmbeddingOrHead) {
  TransformerConfig m = find_preset("tiny", "");
  m.vocab = 0;
  EXPECT_TRUE(embedding_forward_ops(m, sharding(1, 2)).empty());
  EXPECT_TRUE(head_backward_ops(m, sharding(1, 2), 1).empty());
}

TEST(LayerOps, OptimizerTraffic) {
  // bf16 Adam: reads the gradient (2), fp32 master, m, v (12); writes master, m, v and the bf16 weight.
  const MemoryKernel k = optimizer_kernel(find_preset("tiny", ""), 1000);
  EXPECT_EQ(k.bytes_read.count(), 14000u);
  EXPECT_EQ(k.bytes_written.count(), 14000u);
  // bf16 Adam8bit (bitsandbytes' blockwise kernel), 1024 parameters in 4 blocks of 256: reads the gradient
  // (2), the fp32 master (4), both 8-bit moments (2) and 2 fp32 scales per block (8 x 4 bytes); writes the
  // master, the moments, the scales and the bf16 weight: 8 x 1024 + 32 and 8 x 1024 + 32.
  const MemoryKernel q = optimizer_kernel(find_preset("tiny", ""), 1024, Optimizer::kAdam8bit);
  EXPECT_EQ(q.bytes_read.count(), 8224u);
  EXPECT_EQ(q.bytes_written.count(), 8224u);
}

// Dropout is a model property: GPT presets have it (Megatron-LM's attention and hidden dropout),
// Llama's do not; without it no op is named dropout and the FLOPs are the same.
TEST(LayerOps, DropoutKernelsOnlyWhereTheModelHasDropout) {
  const auto dropouts = [](const OpList& ops) {
    int n = 0;
    for (const WorkloadOp& op : ops) n += op.name.find("dropout") != std::string::npos ? 1 : 0;
    return n;
  };
  TransformerConfig m = find_preset("llama3-8b", "");
  EXPECT_FALSE(m.dropout);
  EXPECT_TRUE(find_preset("gpt3-1.3b", "").dropout);
  for (KernelSet kernels : {KernelSet::kFused, KernelSet::kEager}) {
    LayerSharding s = sharding(2, 1, false, Recompute::kNone, false);
    s.kernels = kernels;
    const OpList without = layer_forward_ops(m, s);
    EXPECT_EQ(dropouts(without) + dropouts(layer_backward_ops(m, s, false)), 0);
    m.dropout = true;
    const OpList with = layer_forward_ops(m, s);
    // Eager: attention dropout and two hidden dropouts; fused: the attention dropout (the hidden ones
    // sit inside bias-dropout-add).
    EXPECT_EQ(dropouts(with), kernels == KernelSet::kEager ? 3 : 1);
    EXPECT_DOUBLE_EQ(list_flops(with), list_flops(without));
    m.dropout = false;
  }
}

}  // namespace
}  // namespace commscale

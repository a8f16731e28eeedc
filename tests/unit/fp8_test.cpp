// FP8 training (--fp8, workload/fp8_ops.hpp): the types, the layer's op lists, the plan's memory, the GEMM
// rates by GPU and the predicted step of Llama 2 7B on an HGX H100 node.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/dtype.hpp"
#include "hw/gpu_spec.hpp"
#include "input_error_matcher.hpp"
#include "parallel/plan_memory.hpp"
#include "predict/compute_model.hpp"
#include "predict/gpu_support.hpp"
#include "predict/prediction.hpp"
#include "predict_test_support.hpp"
#include "program/program_json.hpp"
#include "workload/fp8_ops.hpp"
#include "workload/layer_ops.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using commscale::testing::throws_input_error;

const WorkloadOp* find(const OpList& ops, const std::string& name) {
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const WorkloadOp& op) { return op.name == name; });
  return it == ops.end() ? nullptr : &*it;
}

const Gemm& gemm_of(const OpList& ops, const std::string& name) {
  const WorkloadOp* op = find(ops, name);
  if (op == nullptr) throw std::logic_error("no op " + name);
  return std::get<Gemm>(op->payload);
}

TEST(Fp8, TypesComeLastAndStayOutOfCollectivesTypes) {
  EXPECT_EQ(static_cast<int>(DataType::kFloat64), 5);  // the types before FP8 keep their numbers
  EXPECT_EQ(size_of(DataType::kFp8E4M3), 1u);
  EXPECT_EQ(size_of(DataType::kFp8E5M2), 1u);
  EXPECT_EQ(name(DataType::kFp8E4M3), "fp8_e4m3");
  EXPECT_EQ(name(DataType::kFp8E5M2), "fp8_e5m2");
  // bench's -d all: no collective is FP8.
  EXPECT_EQ(all_data_types().size(), 6u);
  EXPECT_TRUE(throws_input_error([] { (void)parse_data_type("fp8_e4m3", "-d"); }, {"-d: unknown data type"}));
  EXPECT_EQ(parse_element_type("fp8_e5m2", "dtype"), DataType::kFp8E5M2);
  EXPECT_EQ(parse_element_type("bfloat16", "dtype"), DataType::kBFloat16);
}

// A layer of tp 2 with sequence parallelism and flash attention, as Megatron-LM runs Llama 2 7B.
LayerSharding tp2_sp(Fp8Recipe fp8) {
  LayerSharding s;
  s.tp = 2;
  s.sequence_parallel = true;
  s.flash_attention = true;
  s.fp8 = fp8;
  return s;
}

TEST(Fp8, LinearGemmsBecomeHybridFp8AndAttentionStays) {
  const TransformerConfig m = find_preset("llama2-7b", "test");
  LayerSharding s = tp2_sp(Fp8Recipe::kNone);
  const OpList bf16_forward = layer_forward_ops(m, s);
  const OpList bf16_backward = layer_backward_ops(m, s);
  s.fp8 = Fp8Recipe::kDelayed;
  const OpList forward = layer_forward_ops(m, s);
  const OpList backward = layer_backward_ops(m, s);

  for (const char* linear : {"qkv", "attn.proj", "mlp.fc1", "mlp.fc2"}) {
    SCOPED_TRACE(linear);
    const std::string l(linear);
    const Gemm& f = gemm_of(forward, l);
    EXPECT_EQ(f.dtype, DataType::kFp8E4M3);
    EXPECT_EQ(f.b_dtype, DataType::kFp8E4M3);
    EXPECT_EQ(f.out_dtype, DataType::kBFloat16);
    EXPECT_EQ(f.accumulate, DataType::kFloat32);
    EXPECT_EQ(f.flops, gemm_of(bf16_forward, l).flops);  // the same shape
    const Gemm& dgrad = gemm_of(backward, l + ".dgrad");
    EXPECT_EQ(dgrad.dtype, DataType::kFp8E5M2);
    EXPECT_EQ(dgrad.b_dtype, DataType::kFp8E4M3);
    const Gemm& wgrad = gemm_of(backward, l + ".wgrad");
    EXPECT_EQ(wgrad.dtype, DataType::kFp8E4M3);
    EXPECT_EQ(wgrad.b_dtype, DataType::kFp8E5M2);
    // The forward's input and the dgrad's output gradient are cast first; the wgrad reads those casts.
    EXPECT_NE(find(forward, l + ".fp8_cast"), nullptr);
    EXPECT_NE(find(backward, l + ".dgrad.fp8_cast"), nullptr);
    EXPECT_EQ(find(backward, l + ".wgrad.fp8_cast"), nullptr);
    // Delayed scaling computes no amax before a cast.
    EXPECT_EQ(find(forward, l + ".fp8_amax"), nullptr);
  }
  // A cast reads the input in bf16 and writes the row-wise and column-wise FP8 copies.
  const auto& cast = std::get<MemoryKernel>(find(forward, "qkv.fp8_cast")->payload);
  const Gemm& qkv = gemm_of(forward, "qkv");
  EXPECT_EQ(cast.bytes_read, Bytes(static_cast<std::uint64_t>(qkv.m * qkv.k) * 2));
  EXPECT_EQ(cast.bytes_written, Bytes(static_cast<std::uint64_t>(qkv.m * qkv.k) * 2));
  // Attention's products stay in bf16, as TransformerEngine's defaults keep them.
  for (const WorkloadOp& op : forward) {
    const auto* g = std::get_if<Gemm>(&op.payload);
    if (g != nullptr && g->flash) {
      EXPECT_EQ(g->dtype, DataType::kBFloat16) << op.name;
    }
  }
  EXPECT_EQ(forward.size(), bf16_forward.size() + 4);  // a cast per linear layer
  EXPECT_EQ(backward.size(), bf16_backward.size() + 4);
  // Without FP8 the lists are as before.
  s.fp8 = Fp8Recipe::kNone;
  EXPECT_EQ(layer_forward_ops(m, s).size(), bf16_forward.size());
}

TEST(Fp8, CurrentScalingReducesSequenceParallelAmaxesOverTp) {
  const TransformerConfig m = find_preset("llama2-7b", "test");
  LayerSharding s = tp2_sp(Fp8Recipe::kCurrent);
  const OpList forward = layer_forward_ops(m, s);
  const OpList backward = layer_backward_ops(m, s);
  for (const char* cast : {"qkv", "attn.proj", "mlp.fc1", "mlp.fc2"}) {
    EXPECT_NE(find(forward, std::string(cast) + ".fp8_amax"), nullptr) << cast;
  }
  // The norm outputs before qkv and fc1 are sequence-parallel; attn.proj's and fc2's inputs are not.
  EXPECT_NE(find(forward, "qkv.fp8_amax.all_reduce"), nullptr);
  EXPECT_NE(find(forward, "mlp.fc1.fp8_amax.all_reduce"), nullptr);
  EXPECT_EQ(find(forward, "attn.proj.fp8_amax.all_reduce"), nullptr);
  EXPECT_NE(find(backward, "mlp.fc2.dgrad.fp8_amax.all_reduce"), nullptr);
  EXPECT_EQ(find(backward, "mlp.fc1.dgrad.fp8_amax.all_reduce"), nullptr);
  // Block scaling: no amax kernel, no reduction; the cast writes the block scales too.
  s.fp8 = Fp8Recipe::kBlock;
  const OpList block = layer_forward_ops(m, s);
  EXPECT_EQ(find(block, "qkv.fp8_amax"), nullptr);
  const auto& cast = std::get<MemoryKernel>(find(block, "qkv.fp8_cast")->payload);
  const auto& delayed_cast = std::get<MemoryKernel>(find(forward, "qkv.fp8_cast")->payload);
  EXPECT_GT(cast.bytes_written, delayed_cast.bytes_written);
}

TEST(Fp8, ProgramJsonKeepsTheTypes) {
  Op op;
  op.name = "qkv.dgrad";
  op.payload = fp8_gemm(make_gemm(64, 32, 16, 1, DataType::kBFloat16), DataType::kFp8E5M2, DataType::kFp8E4M3,
                        DataType::kBFloat16);
  const nlohmann::json j = op;
  EXPECT_EQ(j.dump().find("\"b_dtype\":\"fp8_e4m3\"") != std::string::npos, true) << j.dump();
  const Op back = j.get<Op>();
  const Gemm& g = std::get<Gemm>(back.payload);
  EXPECT_EQ(g.dtype, DataType::kFp8E5M2);
  EXPECT_EQ(g.b_dtype, DataType::kFp8E4M3);
  EXPECT_EQ(g.out_dtype, DataType::kBFloat16);
  // A bf16 GEMM's JSON has no such keys.
  Op plain = op;
  plain.payload = make_gemm(64, 32, 16, 1, DataType::kBFloat16);
  EXPECT_FALSE(nlohmann::json(plain).dump().find("b_dtype") != std::string::npos);
  // The roofline's bytes: 1-byte inputs, a 2-byte output.
  EXPECT_EQ(gemm_bytes_read(g), Bytes((64 * 16 + 16 * 32) * 1));
  EXPECT_EQ(gemm_bytes_written(g), Bytes(64 * 32 * 2));
}

TEST(Fp8, MemoryKeepsFp8WeightCopiesAndFp8LinearInputs) {
  const TransformerConfig m = find_preset("llama2-7b", "test");
  ParallelPlan p = predict::testing::plan(4, 2, 1, 64);
  p.sequence_parallel = true;
  p.flash_attention = true;
  const StageMemory bf16 = memory_per_stage(m, p, {}).front();
  p.fp8 = Fp8Recipe::kDelayed;
  const StageMemory fp8 = memory_per_stage(m, p, {}).front();
  // Two FP8 copies (row-wise and transposed) of each linear weight, 1 byte each.
  const std::uint64_t linear = static_cast<std::uint64_t>(m.layers) * fp8_linear_parameters(layer_parameters(m, p.tp));
  EXPECT_EQ(fp8.bytes.weights - bf16.bytes.weights, Bytes(2 * linear));
  EXPECT_LT(fp8.bytes.activations, bf16.bytes.activations);
  EXPECT_EQ(fp8.bytes.gradients, bf16.bytes.gradients);
  EXPECT_EQ(fp8.bytes.optimizer, bf16.bytes.optimizer);
}

TEST(Fp8, GemmRatesByGpu) {
  EXPECT_EQ(hw::gemm_rate(DataType::kFp8E4M3), hw::MathRate::kFp8Tensor);
  EXPECT_EQ(hw::gemm_rate(DataType::kFp8E5M2, DataType::kFloat32), hw::MathRate::kFp8Tensor);
  EXPECT_EQ(hw::gemm_rate(DataType::kFp8E4M3, DataType::kFloat16), hw::MathRate::kFp8Fp16Acc);
  const hw::Catalog& catalog = hw::testing::catalog();
  // RTX 4090 (GeForce): 330 dense FP8 TFLOP/s with fp32 accumulate, as TransformerEngine runs it; 660 only
  // with fp16 accumulate.
  const predict::ComputeModel rtx4090(catalog.gpu("rtx4090", "test"), nullptr);
  EXPECT_NEAR(rtx4090.peak(DataType::kFp8E4M3).value(), 330.3e12, 1e9);
  EXPECT_NEAR(rtx4090.peak(DataType::kFp8E4M3, DataType::kFloat16).value(), 660.6e12, 1e9);
  EXPECT_NEAR(rtx4090.peak(DataType::kBFloat16).value(), 165.2e12, 1e9);
  // A large FP8 GEMM priced on it: twice bf16's rate (330 over 165), not four times.
  const Gemm bf16 = make_gemm(8192, 8192, 8192, 1, DataType::kBFloat16);
  const Gemm fp8 = fp8_gemm(bf16, DataType::kFp8E4M3, DataType::kFp8E4M3, DataType::kBFloat16);
  const double speedup = rtx4090.time(bf16).value() / rtx4090.time(fp8).value();
  EXPECT_GT(speedup, 1.9);
  EXPECT_LT(speedup, 2.05);
  const predict::ComputeModel h100(catalog.gpu("h100-sxm5", "test"), nullptr);
  EXPECT_NEAR(h100.peak(DataType::kFp8E5M2).value(), 1978.9e12, 1e9);
}

TEST(Fp8, RefusedOnGpusWithoutFp8TensorCores) {
  const hw::Catalog& catalog = hw::testing::catalog();
  for (const char* name : {"a100-sxm4-80gb", "rtx3090"}) {
    predict::TrainingChoices c;
    c.fp8 = Fp8Recipe::kDelayed;
    EXPECT_FALSE(predict::gpu_has_fp8(catalog.gpu(name, "test")));
    EXPECT_TRUE(throws_input_error([&] { (void)predict::fit_to_gpu(catalog.gpu(name, "test"), c); },
                                   {"--fp8: delayed on", name, "no FP8 tensor cores"}));
  }
  for (const char* name : {"h100-sxm5", "h200-sxm", "rtx4090", "l40s", "rtx5090"}) {
    predict::TrainingChoices c;
    c.fp8 = Fp8Recipe::kCurrent;
    EXPECT_TRUE(predict::fit_to_gpu(catalog.gpu(name, "test"), c).empty()) << name;
  }
}

// An MoE layer as TE runs it under Megatron-Core: the routed experts' grouped GEMMs and the shared experts' in
// FP8 with their casts, the router in bf16; the FP8 copies of every local expert's weights in memory, and the
// experts' saved inputs at one byte.
TEST(Fp8, ExpertsRunInFp8WithTheirCastsAndCopies) {
  const TransformerConfig m = find_preset("qwen1.5-moe-a2.7b", "test");  // routed and shared experts
  ParallelPlan p = predict::testing::plan(8, 1, 1, 64);
  p.ep = 4;
  p.flash_attention = true;
  LayerSharding s = layer_sharding(p);
  s.fp8 = Fp8Recipe::kDelayed;
  const OpList forward = layer_forward_ops(m, s, true);
  const OpList backward = layer_backward_ops(m, s, false, true);
  for (const char* name : {"experts.fc1", "experts.fc2", "shared.fc1", "shared.fc2"}) {
    EXPECT_EQ(gemm_of(forward, name).dtype, DataType::kFp8E4M3) << name;
    EXPECT_NE(find(forward, std::string(name) + ".fp8_cast"), nullptr) << name;
    EXPECT_EQ(gemm_of(backward, std::string(name) + ".dgrad").dtype, DataType::kFp8E5M2) << name;
    EXPECT_EQ(gemm_of(backward, std::string(name) + ".wgrad").b_dtype, DataType::kFp8E5M2) << name;
  }
  EXPECT_EQ(gemm_of(forward, "router").dtype, DataType::kBFloat16);
  // The cast before the grouped fc1 reads every dispatched row of the local experts.
  const Gemm& fc1 = gemm_of(forward, "experts.fc1");
  const auto& cast = std::get<MemoryKernel>(find(forward, "experts.fc1.fp8_cast")->payload);
  EXPECT_EQ(cast.elements, static_cast<std::uint64_t>(fc1.m * fc1.k * fc1.batch));

  const StageMemory bf16 = memory_per_stage(m, p, {}).front();
  p.fp8 = Fp8Recipe::kDelayed;
  const StageMemory fp8 = memory_per_stage(m, p, {}).front();
  std::uint64_t linear = 0;
  for (int l = 0; l < m.layers; ++l) linear += fp8_linear_parameters(layer_parameters(m, p.tp, l, p.ep));
  EXPECT_GT(linear, static_cast<std::uint64_t>(m.layers) * fp8_linear_parameters(layer_parameters(m, p.tp)) / 2);
  EXPECT_EQ(fp8.bytes.weights - bf16.bytes.weights, Bytes(2 * linear));
  EXPECT_LT(fp8.bytes.activations, bf16.bytes.activations);
}

// Qwen1.5-MoE at ep 1: its 60 local experts get 4096 x 4 / 60 rows each (274, rounded up), which cuBLASLt's
// FP8 GEMMs cannot take; TE pads each expert's rows to a multiple of 16 (288), and so do the FP8 GEMMs here,
// at the padded rows' FLOPs. bf16 keeps 274.
TEST(Fp8, ExpertRowsArePaddedToSixteen) {
  const TransformerConfig m = find_preset("qwen1.5-moe-a2.7b", "test");
  ParallelPlan p = predict::testing::plan(1, 1, 1, 1);
  p.flash_attention = true;
  LayerSharding s = layer_sharding(p);
  const Gemm bf16 = gemm_of(layer_forward_ops(m, s, true), "experts.fc1");
  ASSERT_EQ(bf16.m, 274);
  s.fp8 = Fp8Recipe::kDelayed;
  const OpList forward = layer_forward_ops(m, s, true);
  const Gemm fc1 = gemm_of(forward, "experts.fc1");
  EXPECT_EQ(fc1.m, 288);
  EXPECT_EQ(fc1.n, bf16.n);
  EXPECT_EQ(fc1.k, bf16.k);
  EXPECT_DOUBLE_EQ(fc1.flops.value(), bf16.flops.value() * 288.0 / 274.0);
  EXPECT_EQ(gemm_of(layer_backward_ops(m, s, false, true), "experts.fc2.wgrad").k, 288);
  for (const OpList& ops : {forward, layer_backward_ops(m, s, false, true)}) {
    for (const WorkloadOp& op : ops) {
      const auto* g = std::get_if<Gemm>(&op.payload);
      if (g == nullptr || !is_fp8(g->dtype)) continue;
      EXPECT_TRUE(g->m % 16 == 0 && g->n % 16 == 0 && g->k % 16 == 0) << op.name;
    }
  }
}

// --fp8-dispatch: the forward dispatch all-to-all moves each element in a byte plus an fp32 scale per 128
// (33/32 bytes), after a quantize kernel that reads the rows in bf16; the combine and the backward's
// all-to-alls keep bf16. Mixtral 8x7B, tp 1, dp 8, ep 8, micro batch 1, seq 4096: each rank routes 4096 x 2
// rows of 4096, 33,554,432 elements: 67,108,864 bytes in bf16, 34,603,008 in FP8 dispatch.
TEST(Fp8, DispatchAllToAllMovesFp8RowsAndScales) {
  const TransformerConfig m = find_preset("mixtral-8x7b", "test");
  ParallelPlan p = predict::testing::plan(8, 1, 1, 64);
  p.ep = 8;
  p.flash_attention = true;
  LayerSharding s = layer_sharding(p);
  s.fp8 = Fp8Recipe::kDelayed;
  const auto collective = [](const OpList& ops, const std::string& name) {
    return std::get<LayerCollective>(find(ops, name)->payload);
  };
  const OpList plain = layer_forward_ops(m, s, true);
  EXPECT_EQ(find(plain, "dispatch.fp8_quantize"), nullptr);
  EXPECT_EQ(collective(plain, "dispatch.all_to_all").bytes, Bytes(67108864));
  s.fp8_dispatch = true;
  const OpList forward = layer_forward_ops(m, s, true);
  const LayerCollective dispatch = collective(forward, "dispatch.all_to_all");
  EXPECT_EQ(dispatch.bytes, Bytes(34603008));
  EXPECT_EQ(dispatch.dtype, DataType::kFp8E4M3);
  EXPECT_EQ(collective(forward, "combine.all_to_all").bytes, Bytes(67108864));
  const WorkloadOp* quantize = find(forward, "dispatch.fp8_quantize");
  ASSERT_NE(quantize, nullptr);
  const auto& kernel = std::get<MemoryKernel>(quantize->payload);
  EXPECT_EQ(kernel.elements, 33554432u);
  EXPECT_EQ(kernel.bytes_read, Bytes(67108864));
  EXPECT_EQ(kernel.bytes_written, Bytes(34603008));
  // The all-to-all waits for the quantize, which follows the permute.
  const auto at = [&](const std::string& name) {
    return static_cast<int>(
        std::find_if(forward.begin(), forward.end(), [&](const WorkloadOp& op) { return op.name == name; }) -
        forward.begin());
  };
  EXPECT_EQ(find(forward, "dispatch.all_to_all")->deps, std::vector<int>{at("dispatch.fp8_quantize")});
  EXPECT_EQ(at("dispatch.fp8_quantize"), at("dispatch.permute") + 1);
  const OpList backward = layer_backward_ops(m, s, false, true);
  EXPECT_EQ(collective(backward, "dispatch.all_to_all").bytes, Bytes(67108864));
  EXPECT_EQ(collective(backward, "combine.all_to_all").bytes, Bytes(67108864));

  // Refused without --fp8 or without experts, naming --fp8-dispatch.
  p.fp8_dispatch = true;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, p); }, {"--fp8-dispatch", "without --fp8"}));
  p.fp8 = Fp8Recipe::kDelayed;
  EXPECT_NO_THROW((void)CheckedPlan(m, p));
  ParallelPlan dense = predict::testing::plan(8, 1, 1, 64);
  dense.fp8 = Fp8Recipe::kDelayed;
  dense.fp8_dispatch = true;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(find_preset("llama2-7b", "test"), dense); },
                                 {"--fp8-dispatch", "no experts"}));
}

// Llama 2 7B on one HGX H100 node (tp 2, dp 4, sequence parallel, global batch 64): the linear layers'
// GEMMs at about twice bf16's rate, the casts, the weights' cast and the amax reductions added. The step
// is faster, by less than the GEMMs alone would make it: attention, norms and communication stay.
TEST(Fp8, Llama7bOnH100IsFasterThanBf16ByAPlausibleMargin) {
  const TransformerConfig m = find_preset("llama2-7b", "test");
  const predict::Target t = predict::testing::target("hgx-h100");
  ParallelPlan p = predict::testing::plan(4, 2, 1, 64);
  p.sequence_parallel = true;
  p.flash_attention = true;
  const double bf16 = predict::predict_step(predict::prepare_for(CheckedPlan(m, p), t, {}), t).summary.step_time_s;
  double delayed = 0.0;
  for (Fp8Recipe r : {Fp8Recipe::kDelayed, Fp8Recipe::kCurrent, Fp8Recipe::kBlock}) {
    p.fp8 = r;
    const double fp8 = predict::predict_step(predict::prepare_for(CheckedPlan(m, p), t, {}), t).summary.step_time_s;
    SCOPED_TRACE(std::string(name(r)));
    EXPECT_LT(fp8, bf16 / 1.15);  // at least 15% faster
    EXPECT_GT(fp8, bf16 / 1.8);   // and not near the GEMMs' 2x
    if (r == Fp8Recipe::kDelayed) delayed = fp8;
    if (r == Fp8Recipe::kCurrent) {
      EXPECT_GT(fp8, delayed);  // an amax kernel before each cast
    }
  }
}

}  // namespace
}  // namespace commscale

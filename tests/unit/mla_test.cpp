// Multi-head latent attention (src/workload/MLA.md): a small MLA model's parameters, GEMM shapes, collectives and
// FLOPs counted by hand at tp 1 and tp 2 with and without sequence parallelism, as Megatron-Core's
// MLASelfAttention runs it; the program checker on several plans; the DeepSeek presets' parameter counts against
// the published ones; model JSON, Hugging Face configs and the refusals.

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "hw_test_support.hpp"
#include "input_error_matcher.hpp"
#include "parallel/program_builder.hpp"
#include "program/checker.hpp"
#include "workload/flops.hpp"
#include "workload/layer_ops.hpp"
#include "workload/memory.hpp"
#include "workload/model_spec.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;

// 2 Llama-style layers of h 128, 4 heads, F 256; MLA with a q latent of 32, a kv latent of 16, heads of
// d_nope 16 + d_rope 8 for queries and keys and d_v 16 for values.
TransformerConfig tiny_latent_model(std::int64_t q_lora_rank = 32) {
  TransformerConfig m;
  m.name = "tiny-mla";
  m.layers = 2;
  m.hidden = 128;
  m.heads = m.kv_heads = 4;
  m.ffn = 256;
  m.vocab = 1024;
  m.seq = 64;
  m.activation = MlpActivation::kSwiGlu;
  m.norm = NormKind::kRmsNorm;
  m.positions = PositionEmbedding::kRotary;
  m.linear_bias = false;
  m.dropout = false;
  m.tied_embeddings = false;
  m.mla = {
      .q_lora_rank = q_lora_rank, .kv_lora_rank = 16, .qk_nope_head_dim = 16, .qk_rope_head_dim = 8, .v_head_dim = 16};
  return m;
}

LayerSharding latent_sharding(int tp, bool sp, bool flash = false) {
  LayerSharding s;
  s.tp = tp;
  s.sequence_parallel = sp;
  s.flash_attention = flash;
  return s;
}

const WorkloadOp& latent_op(const OpList& ops, const std::string& name) {
  for (const WorkloadOp& op : ops) {
    if (op.name == name) return op;
  }
  throw std::runtime_error("no op " + name);
}

bool has_latent_op(const OpList& ops, const std::string& name) {
  for (const WorkloadOp& op : ops) {
    if (op.name == name) return true;
  }
  return false;
}

void expect_gemm(const OpList& ops, const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
                 std::int64_t batch = 1) {
  const Gemm& g = std::get<Gemm>(latent_op(ops, name).payload);
  EXPECT_EQ(g.m, m) << name;
  EXPECT_EQ(g.n, n) << name;
  EXPECT_EQ(g.k, k) << name;
  EXPECT_EQ(g.batch, batch) << name;
}

std::uint64_t latent_collective_bytes(const OpList& ops, const std::string& name) {
  return std::get<LayerCollective>(latent_op(ops, name).payload).bytes.count();
}

TEST(Mla, ParametersCountedByHand) {
  const TransformerConfig m = tiny_latent_model();
  // q: H r_q + r_q (norm) + r_q n (d_nope + d_rope) = 4096 + 32 + 32 x 4 x 24 = 7200;
  // kv: H (r_kv + d_rope) + r_kv (norm) + r_kv n (d_nope + d_v) = 3072 + 16 + 16 x 4 x 32 = 5136.
  EXPECT_EQ(layer_parameters(m, 1).qkv, 7200u + 5136u);
  EXPECT_EQ(layer_parameters(m, 1).proj, 4u * 16 * 128);  // n d_v x H
  // tp 2: the down projections and norms whole (4096 + 32 + 3072 + 16), the up projections halved.
  EXPECT_EQ(layer_parameters(m, 2).qkv, 7216u + (3072u + 2048u) / 2);
  EXPECT_EQ(layer_parameters(m, 2).proj, 4u * 16 * 128 / 2);
  EXPECT_EQ(mla_replicated_parameters(m), 7216u);
  // Without a q latent: the query projection H x n (d_nope + d_rope), split t ways.
  const TransformerConfig lite = tiny_latent_model(0);
  EXPECT_EQ(layer_parameters(lite, 2).qkv, 3072u + 16 + (128u * 96 + 2048) / 2);
}

TEST(Mla, ShapesAtTpOne) {
  const TransformerConfig m = tiny_latent_model();
  const OpList f = layer_forward_ops(m, latent_sharding(1, false));
  // T = 64 tokens.
  expect_gemm(f, "attn.q_down", 64, 32, 128);
  expect_gemm(f, "attn.q_up", 64, 4 * 24, 32);
  expect_gemm(f, "attn.kv_down", 64, 16 + 8, 128);
  expect_gemm(f, "attn.kv_up", 64, 4 * 32, 16);
  expect_gemm(f, "attn.scores", 64, 64, 24, 4);   // QK^T over d_nope + d_rope
  expect_gemm(f, "attn.context", 64, 16, 64, 4);  // PV over d_v
  expect_gemm(f, "attn.proj", 64, 128, 4 * 16);
  EXPECT_FALSE(has_latent_op(f, "qkv"));
  const OpList b = layer_backward_ops(m, latent_sharding(1, false));
  expect_gemm(b, "attn.context.dp", 64, 64, 16, 4);
  expect_gemm(b, "attn.context.dv", 64, 16, 64, 4);
  expect_gemm(b, "attn.scores.dq", 64, 24, 64, 4);
  expect_gemm(b, "attn.scores.dk", 64, 24, 64, 4);
  expect_gemm(b, "attn.kv_up.dgrad", 64, 16, 128);
  expect_gemm(b, "attn.kv_up.wgrad", 16, 128, 64);
  expect_gemm(b, "attn.q_down.wgrad", 128, 32, 64);
  // Flash attention: the causal share of the keys ((64 < 128: all of them), the widths as above.
  const OpList flash = layer_forward_ops(m, latent_sharding(1, false, true));
  expect_gemm(flash, "attn.scores", 64, 64, 24, 4);
  expect_gemm(flash, "attn.context", 64, 16, 64, 4);
  const OpList flash_back = layer_backward_ops(m, latent_sharding(1, false, true));
  expect_gemm(flash_back, "attn.scores", 64, 64, 24, 4);
  expect_gemm(flash_back, "attn.context.dp", 64, 64, 16, 4);
  expect_gemm(flash_back, "attn.scores.dk", 64, 24, 64, 4);
}

TEST(Mla, TensorParallelWithSequenceParallelism) {
  const TransformerConfig m = tiny_latent_model();
  const OpList f = layer_forward_ops(m, latent_sharding(2, true));
  // The duplicated down projections on the rank's 32 rows, no all-gather of ln1 before them; the latents (and
  // the keys' rotary part) all-gathered over the 64 tokens: 64 x 32 x 2, 64 x 16 x 2, 64 x 8 x 2 bytes.
  expect_gemm(f, "attn.q_down", 32, 32, 128);
  expect_gemm(f, "attn.kv_down", 32, 24, 128);
  EXPECT_FALSE(has_latent_op(f, "ln1.all_gather"));
  EXPECT_EQ(latent_collective_bytes(f, "attn.q_norm.all_gather"), 64u * 32 * 2);
  EXPECT_EQ(latent_collective_bytes(f, "attn.kv_norm.all_gather"), 64u * 16 * 2);
  EXPECT_EQ(latent_collective_bytes(f, "attn.k_rope.all_gather"), 64u * 8 * 2);
  expect_gemm(f, "attn.q_up", 64, 2 * 24, 32);  // 2 heads a rank
  expect_gemm(f, "attn.kv_up", 64, 2 * 32, 16);
  expect_gemm(f, "attn.scores", 64, 64, 24, 2);
  expect_gemm(f, "attn.proj", 64, 128, 2 * 16);
  EXPECT_EQ(latent_collective_bytes(f, "attn.reduce_scatter"), 64u * 128 * 2);
  const OpList b = layer_backward_ops(m, latent_sharding(2, true));
  EXPECT_EQ(latent_collective_bytes(b, "attn.kv_up.reduce_scatter"), 64u * 16 * 2);
  EXPECT_EQ(latent_collective_bytes(b, "attn.q_up.reduce_scatter"), 64u * 32 * 2);
  EXPECT_EQ(latent_collective_bytes(b, "attn.k_rope.reduce_scatter"), 64u * 8 * 2);
  expect_gemm(b, "attn.kv_down.dgrad", 32, 128, 24);
  expect_gemm(b, "attn.q_down.wgrad", 128, 32, 32);
  // Every parameter's gradient is completed once: the layer's on this rank.
  std::uint64_t grads = 0;
  for (const WorkloadOp& op : b) grads += op.grad_parameters;
  EXPECT_EQ(grads, layer_parameters(m, 2).total());
}

TEST(Mla, TensorParallelWithoutSequenceParallelism) {
  const TransformerConfig m = tiny_latent_model();
  const OpList f = layer_forward_ops(m, latent_sharding(2, false));
  expect_gemm(f, "attn.q_down", 64, 32, 128);  // every rank projects every token
  for (const char* gather :
       {"ln1.all_gather", "attn.q_norm.all_gather", "attn.kv_norm.all_gather", "attn.k_rope.all_gather"}) {
    EXPECT_FALSE(has_latent_op(f, gather)) << gather;
  }
  EXPECT_EQ(latent_collective_bytes(f, "attn.all_reduce"), 64u * 128 * 2);
  const OpList b = layer_backward_ops(m, latent_sharding(2, false));
  EXPECT_EQ(latent_collective_bytes(b, "attn.kv_up.all_reduce"), 64u * 16 * 2);
  EXPECT_EQ(latent_collective_bytes(b, "attn.q_up.all_reduce"), 64u * 32 * 2);
  EXPECT_FALSE(has_latent_op(b, "attn.k_rope.reduce_scatter"));
  // Without a q latent the query projection is column-parallel from H: ln1's gather (with sp) and reduction.
  const TransformerConfig lite = tiny_latent_model(0);
  const OpList lf = layer_forward_ops(lite, latent_sharding(2, true));
  EXPECT_EQ(latent_collective_bytes(lf, "ln1.all_gather"), 64u * 128 * 2);
  expect_gemm(lf, "attn.q_proj", 64, 2 * 24, 128);
  const OpList lb = layer_backward_ops(lite, latent_sharding(2, true));
  EXPECT_EQ(latent_collective_bytes(lb, "attn.q_proj.reduce_scatter"), 64u * 128 * 2);
  std::uint64_t grads = 0;
  for (const WorkloadOp& op : lb) grads += op.grad_parameters;
  EXPECT_EQ(grads, layer_parameters(lite, 2).total());
}

TEST(Mla, FlopsCountedByHand) {
  const TransformerConfig m = tiny_latent_model();
  // The forward GEMMs of the attention at tp 1, non-flash: 2 T (H r_q + r_q n dqk + H (r_kv + d_rope) +
  // r_kv n (d_nope + d_v) + n d_v H) for the projections, 2 s s n (dqk + dv) for QK^T and PV.
  const double t = 64;
  const double projections = 2 * t * (128 * 32 + 32 * 96 + 128 * 24 + 16 * 128 + 64 * 128);
  const double core = 2 * 64.0 * 64 * 4 * (24 + 16);
  const double mlp = 2 * t * (128 * 512 + 256 * 128);
  EXPECT_DOUBLE_EQ(gemm_flops(layer_forward_ops(m, latent_sharding(1, false))).value(), projections + core + mlp);
  // Megatron-LM's count (num_floating_point_operations with multi_latent_attention), per sequence:
  // 6 s l [2 (r_q (H + n dqk + 1) + r_kv (H + n (d_nope + d_v) + 1) + H d_rope + n d_v H)] for the attention's
  // weights in commscale's 12-per-weight form, + 6 s^2 l n (dqk + dv) for its core over every key, + the SwiGLU
  // MLP 18 s l H F and the logits 6 s H V.
  const double s = 64;
  const double l = 2;
  const double attention = 32 * (128 + 96 + 1) + 16 * (128 + 128 + 1) + 128 * 8 + 64 * 128;
  const double expected = 6 * s * l * attention + 6 * s * s * l * 4 * 40 + 18 * s * l * 128 * 256 + 6 * s * 128 * 1024;
  EXPECT_NEAR(megatron_model_flops(m, 1).value() / expected, 1.0, 1e-12);
}

TEST(Mla, ActivationsCountedByHand) {
  const TransformerConfig m = tiny_latent_model();
  LayerSharding s = latent_sharding(1, false, true);
  // No dropout, flash attention: 4 tensors of T H (ln1 and ln2 inputs, the down projections' and fc1's input),
  // Q, K of n (d_nope + d_rope) and V, the projection input of n d_v, fc1's output (2F) and fc2's input (F), and
  // the latents: the norms' and up projections' inputs (2 r_q + 2 r_kv) and the keys' rotary part; 2 bytes each.
  const std::uint64_t expected =
      2 * (4 * 64 * 128 + 64 * 4 * (2 * 24 + 2 * 16) + 64 * 512 + 64 * 256 + 64 * (2 * 32 + 2 * 16 + 8));
  EXPECT_EQ(layer_activation_bytes(m, s).count(), expected);
}

ParallelPlan latent_plan(int tp, int pp, int dp, bool sp) {
  ParallelPlan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.sequence_parallel = sp;
  p.flash_attention = true;
  p.global_batch = dp * 4;
  return p;
}

TEST(Mla, ProgramsPassTheChecker) {
  for (const std::int64_t q_lora : {32, 0}) {
    const TransformerConfig m = tiny_latent_model(q_lora);
    std::vector<ParallelPlan> plans = {latent_plan(1, 1, 2, false), latent_plan(2, 1, 1, true),
                                       latent_plan(2, 1, 2, false), latent_plan(2, 2, 1, true)};
    ParallelPlan recompute = latent_plan(2, 1, 1, true);
    recompute.recompute = Recompute::kFull;
    recompute.zero_stage = 1;
    plans.push_back(recompute);
    for (const CpCommType comm : {CpCommType::kP2p, CpCommType::kAllGather}) {
      ParallelPlan cp = latent_plan(2, 1, 1, true);
      cp.cp = 2;
      cp.cp_comm = comm;
      plans.push_back(cp);
    }
    ParallelPlan unfused = latent_plan(1, 2, 1, false);
    unfused.flash_attention = false;
    unfused.recompute = Recompute::kSelective;
    plans.push_back(unfused);
    for (const ParallelPlan& p : plans) {
      const ProgramSet set = build_program(CheckedPlan(m, p));
      const ProgramCheck check = check_program(set);
      EXPECT_TRUE(check.ok()) << "tp " << p.tp << " pp " << p.pp << " dp " << p.dp << ": "
                              << (check.ok() ? "" : check.problems.front());
    }
  }
}

TEST(Mla, ContextParallelExchangesCountedByHand) {
  const TransformerConfig m = tiny_latent_model();
  LayerSharding s = latent_sharding(1, false, true);
  s.cp = 2;
  // 32 tokens a rank; a key n (d_nope + d_rope) = 96 wide, a value n d_v = 64, 2 bytes each.
  s.cp_comm = CpCommType::kAllGather;
  const OpList gather = layer_forward_ops(m, s);
  EXPECT_EQ(latent_collective_bytes(gather, "attn.cp.k.all_gather"), 2u * 32 * 96 * 2);
  EXPECT_EQ(latent_collective_bytes(gather, "attn.cp.v.all_gather"), 2u * 32 * 64 * 2);
  const OpList gather_back = layer_backward_ops(m, s);
  EXPECT_EQ(latent_collective_bytes(gather_back, "attn.cp.dk.reduce_scatter"), 2u * 32 * 96 * 2);
  EXPECT_EQ(latent_collective_bytes(gather_back, "attn.cp.dv.reduce_scatter"), 2u * 32 * 64 * 2);
  s.cp_comm = CpCommType::kP2p;
  const OpList ring = layer_forward_ops(m, s);
  EXPECT_EQ(latent_collective_bytes(ring, "attn.cp1.kv.sendrecv"), 32u * (96 + 64) * 2);
  // Step 1: the rank's 32 queries over half of another rank's block (s / 2cp = 16 keys), unmasked.
  expect_gemm(ring, "attn.cp1.scores", 32, 16, 24, 4);
  expect_gemm(ring, "attn.cp1.context", 32, 16, 16, 4);
}

// FP8 (fp8_ops.hpp): MLA's projections are TE Linears, FP8 forward and backward like qkv, each padded to 16
// (the kv down projection's r_kv + d_rope = 24 -> 32); with current scaling the up projections' gathered
// inputs reduce their amax over tp, the down projections' own rows do not. The program passes the checker.
TEST(Mla, Fp8RunsTheProjectionsInFp8) {
  const TransformerConfig m = tiny_latent_model();
  LayerSharding s = latent_sharding(2, true, true);
  s.fp8 = Fp8Recipe::kCurrent;
  const OpList f = layer_forward_ops(m, s);
  const OpList b = layer_backward_ops(m, s);
  for (const char* linear : {"attn.q_down", "attn.q_up", "attn.kv_down", "attn.kv_up", "attn.proj"}) {
    const std::string name(linear);
    EXPECT_EQ(std::get<Gemm>(latent_op(f, name).payload).dtype, DataType::kFp8E4M3) << name;
    EXPECT_EQ(std::get<Gemm>(latent_op(b, name + ".dgrad").payload).dtype, DataType::kFp8E5M2) << name;
    EXPECT_EQ(std::get<Gemm>(latent_op(b, name + ".wgrad").payload).b_dtype, DataType::kFp8E5M2) << name;
    EXPECT_TRUE(has_latent_op(f, name + ".fp8_cast")) << name;
  }
  expect_gemm(f, "attn.kv_down", 32, 32, 128);  // 64 / 2 rows, 24 -> 32 columns
  EXPECT_TRUE(has_latent_op(f, "attn.q_up.fp8_amax.all_reduce"));
  EXPECT_TRUE(has_latent_op(f, "attn.kv_up.fp8_amax.all_reduce"));
  EXPECT_FALSE(has_latent_op(f, "attn.q_down.fp8_amax.all_reduce"));
  EXPECT_FALSE(has_latent_op(f, "attn.kv_down.fp8_amax.all_reduce"));
  ParallelPlan p = latent_plan(2, 2, 2, true);
  p.fp8 = Fp8Recipe::kDelayed;
  const ProgramCheck check = check_program(build_program(CheckedPlan(m, p)));
  EXPECT_TRUE(check.ok()) << check.problems.front();
}

TEST(Mla, RefusedWhereNotModelled) {
  const TransformerConfig m = tiny_latent_model();
  ParallelPlan eager = latent_plan(1, 1, 1, false);
  eager.kernels = KernelSet::kEager;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, eager); }, {"--kernels", "MLA"}));
  TransformerConfig gqa = m;
  gqa.kv_heads = 2;
  EXPECT_TRUE(throws_input_error([&] { validate_model(gqa, "m.json"); }, {"m.json: kv_heads", "own keys"}));
  TransformerConfig bias = m;
  bias.linear_bias = true;
  EXPECT_TRUE(throws_input_error([&] { validate_model(bias, "m.json"); }, {"m.json: linear_bias", "have no biases"}));
  TransformerConfig partial = m;
  partial.mla.kv_lora_rank = 0;
  EXPECT_TRUE(throws_input_error([&] { validate_model(partial, "m.json"); }, {"m.json: mla.kv_lora_rank"}));
  TransformerConfig no_rope = m;
  no_rope.mla.qk_rope_head_dim = 0;
  EXPECT_TRUE(throws_input_error([&] { validate_model(no_rope, "m.json"); }, {"m.json: mla.qk_rope_head_dim"}));
}

TEST(Mla, ModelJsonAndHuggingFaceConfig) {
  const TransformerConfig v3 = find_preset("deepseek-v3", "");
  const nlohmann::json doc = model_to_json(v3);
  ASSERT_TRUE(doc.contains("mla"));
  EXPECT_EQ(model_from_json(doc, "model.json"), v3);
  EXPECT_FALSE(model_to_json(find_preset("mixtral-8x7b", "")).contains("mla"));
  nlohmann::json bad = doc;
  bad["mla"]["kv_rank"] = 1;
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_json(bad, "m.json"); }, {"m.json: mla: kv_rank", "unknown"}));
  // DeepSeek-V2-Lite's config.json: q_lora_rank null (queries from the hidden state).
  const std::string hf = hw::testing::kSourceDir + "/tests/data/hf/";
  const TransformerConfig lite = load_model_file(hf + "deepseek-v2-lite.json", 4096);
  EXPECT_EQ(lite.mla, find_preset("deepseek-v2-lite", "").mla);
  EXPECT_EQ(lite.mla.q_lora_rank, 0);
  const TransformerConfig v3_read = load_model_file(hf + "deepseek-v3.json", 4096);
  EXPECT_EQ(v3_read.mla, v3.mla);
  EXPECT_EQ(parameter_count(v3_read), parameter_count(v3));
}

TEST(Mla, DeepSeekParameterCounts) {
  const auto billions = [](std::uint64_t n) { return static_cast<double>(n) / 1e9; };
  // DeepSeek-V2-Lite: 15.7 B, 2.4 B active (DeepSeek's count leaves the input embedding out: 102400 x 2048).
  const TransformerConfig lite = find_preset("deepseek-v2-lite", "");
  EXPECT_NEAR(billions(parameter_count(lite)), 15.706, 0.001);
  EXPECT_NEAR(billions(active_parameter_count(lite) - 102400ULL * 2048), 2.45, 0.01);
  // DeepSeek-V3: 671 B, 37 B active, without the multi-token prediction module.
  const TransformerConfig v3 = find_preset("deepseek-v3", "");
  EXPECT_NEAR(billions(parameter_count(v3)), 671.03, 0.01);
  EXPECT_NEAR(billions(active_parameter_count(v3)), 37.55, 0.01);
}

}  // namespace
}  // namespace commscale

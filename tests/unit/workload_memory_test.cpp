// Memory per rank: ZeRO model states, Korthikanti activations, microbatches in flight, the fit check.

#include <gtest/gtest.h>

#include "parallel/plan_memory.hpp"
#include "parallel/schedule.hpp"
#include "workload/memory.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

LayerSharding sharding(int tp, bool sp, Recompute r = Recompute::kNone, bool flash = false) {
  LayerSharding s;
  s.tp = tp;
  s.sequence_parallel = sp;
  s.recompute = r;
  s.flash_attention = flash;
  return s;
}

TEST(ModelStates, ZeroStagesByHand) {
  // GPT-3 175B on tp 8, pp 16: a middle stage holds 6 layers of 226576896 parameters (see
  // workload_model_test): Psi = 1359461376, and Psi / 8 = 169932672 with dp = 8.
  const TransformerConfig m = find_preset("gpt3-175b", "");
  const std::uint64_t psi = 1359461376, shard = 169932672;
  const ModelStateBytes s0 = model_state_bytes(m, psi, 0, 8);  // 16 Psi: 2 + 2 + 12
  EXPECT_EQ(s0.weights.count(), 2 * psi);
  EXPECT_EQ(s0.gradients.count(), 2 * psi);
  EXPECT_EQ(s0.optimizer.count(), 12 * psi);
  const ModelStateBytes s1 = model_state_bytes(m, psi, 1, 8);  // 4 Psi + 12 Psi / d
  EXPECT_EQ((s1.weights + s1.gradients + s1.optimizer).count(), 4 * psi + 12 * shard);
  const ModelStateBytes s2 = model_state_bytes(m, psi, 2, 8);  // 2 Psi + 14 Psi / d
  EXPECT_EQ((s2.weights + s2.gradients + s2.optimizer).count(), 2 * psi + 14 * shard);
  const ModelStateBytes s3 = model_state_bytes(m, psi, 3, 8);  // 16 Psi / d
  EXPECT_EQ((s3.weights + s3.gradients + s3.optimizer).count(), 16 * shard);
  // fp32 training has no master copy: 4 + 4 + 8 bytes per parameter.
  TransformerConfig fp32 = m;
  fp32.dtype = DataType::kFloat32;
  const ModelStateBytes f = model_state_bytes(fp32, 100, 0, 1);
  EXPECT_EQ((f.weights + f.gradients + f.optimizer).count(), 1600u);
}

TEST(Activations, KorthikantiFormulasForGpt3_175b) {
  // s = 2048, B = 1, h = 12288, a = 96, t = 8: s B h = 25165824 and 5 a s / h = 80.
  const TransformerConfig m = find_preset("gpt3-175b", "");
  const std::uint64_t sbh = 25165824;
  // Tensor parallel: s B h (10 + 24/t + 5 a s/(h t)) = sbh * (10 + 3 + 10).
  EXPECT_EQ(layer_activation_bytes(m, sharding(8, false)).count(), sbh * 23);
  // + sequence parallel: s B h / t (34 + 5 a s / h) = sbh / 8 * 114 = 358612992.
  EXPECT_EQ(layer_activation_bytes(m, sharding(8, true)).count(), 358612992u);
  // + selective recompute: 34 s B h / t.
  EXPECT_EQ(layer_activation_bytes(m, sharding(8, true, Recompute::kSelective)).count(), sbh / 8 * 34);
  // Flash attention keeps no s^2 tensor either.
  EXPECT_EQ(layer_activation_bytes(m, sharding(8, true, Recompute::kNone, true)).count(), sbh / 8 * 34);
  // Full recompute: the layer input only, 2 s B h (split t ways with sequence parallelism).
  EXPECT_EQ(layer_activation_bytes(m, sharding(8, false, Recompute::kFull)).count(), 2 * sbh);
  EXPECT_EQ(layer_activation_bytes(m, sharding(8, true, Recompute::kFull)).count(), 2 * sbh / 8);
  // No parallelism: s B h (34 + 5 a s / h).
  EXPECT_EQ(layer_activation_bytes(m, sharding(1, false)).count(), sbh * 114);
}

TEST(Activations, GqaAndSwigluGeneralization) {
  // LLaMA-2 70B, t = 1, B = 1, s = 4096, h = 8192, g/a = 1/8, F = 28672:
  // replicated 2 norms + QKV input + fc1 input (2 bytes each), no dropout masks (Llama has no dropout) = 8 sbh;
  // Q 2 + K and V 2 * 1/8 each + projection input 2 = 4.5 sbh; SwiGLU input 2 * 2F, fc2 input 2F = 6 sbF;
  // s^2 terms: the softmax output only, 2 a s^2 B.
  const TransformerConfig m = find_preset("llama2-70b", "");
  const std::uint64_t sbh = 4096ull * 8192, sbf = 4096ull * 28672, as2 = 64ull * 4096 * 4096;
  EXPECT_EQ(layer_activation_bytes(m, sharding(1, false)).count(), 25 * sbh / 2 + 6 * sbf + 2 * as2);
}

TEST(InFlight, SchedulesHoldWhatTheFormulasSay) {
  const std::vector<double> one = {1.0};
  // 1F1B: the first stage holds p microbatches, the last one; GPipe holds all m.
  EXPECT_EQ(peak_in_flight(stage_schedule(ScheduleKind::k1F1B, 4, 0, 8, 1), one), 4);
  EXPECT_EQ(peak_in_flight(stage_schedule(ScheduleKind::k1F1B, 4, 3, 8, 1), one), 1);
  EXPECT_EQ(peak_in_flight(stage_schedule(ScheduleKind::k1F1B, 4, 0, 2, 1), one), 2);  // m < p
  EXPECT_EQ(peak_in_flight(stage_schedule(ScheduleKind::kGpipe, 4, 2, 8, 1), one), 8);
  // Interleaved, p = 4, v = 2, m = 8: p (1 + (p - 1)/(p v)) = 4 * 11/8 = 5.5 microbatches of l/p
  // layers, i.e. 11 chunk-microbatches of l/(p v) layers each.
  EXPECT_EQ(peak_in_flight(stage_schedule(ScheduleKind::kInterleaved, 4, 0, 8, 2), {1.0, 1.0}), 11);
}

ParallelPlan gpt3_plan() {
  ParallelPlan p;
  p.tp = 8;
  p.pp = 16;
  p.dp = 8;
  p.sequence_parallel = true;
  p.zero_stage = 1;
  p.global_batch = 512;
  return p;
}

TEST(StageMemory, Gpt3_175bOn1024Ranks) {
  const TransformerConfig m = find_preset("gpt3-175b", "");
  const auto stages = memory_per_stage(m, gpt3_plan(), MemoryOptions{});
  ASSERT_EQ(stages.size(), 16u);
  // Stage 0: 16 microbatches in flight x 6 layers x 358612992 bytes.
  EXPECT_EQ(stages[0].layers_in_flight, 96);
  EXPECT_EQ(stages[0].bytes.activations.count(), 96ull * 358612992);
  EXPECT_EQ(stages[15].layers_in_flight, 6);
  // Stage 0 adds the embedding shard 6400 * 12288 and positions 2048 * 12288 to 6 layers.
  EXPECT_EQ(stages[0].parameters, 1359461376u + 6400u * 12288 + 2048u * 12288);
  // The last stage keeps one microbatch's fp32 logits: 4 * 2048 * 6400 bytes.
  EXPECT_EQ(stages[15].bytes.logits.count(), 4ull * 2048 * 6400);
  EXPECT_EQ(stages[7].bytes.workspace.count(), 2 * kGiB);
}

TEST(Fit, SaysWhatDoesNotFitAndByHowMuch) {
  const TransformerConfig m = find_preset("gpt3-175b", "");
  const auto stages = memory_per_stage(m, gpt3_plan(), MemoryOptions{});
  const FitVerdict fits = check_fit(stages, Bytes(80 * kGiB));
  EXPECT_TRUE(fits.fits);
  EXPECT_EQ(fits.worst_stage, 0);
  EXPECT_NE(fits.message.find("fits"), std::string::npos);
  const FitVerdict tight = check_fit(stages, Bytes(24 * kGiB));
  EXPECT_FALSE(tight.fits);
  EXPECT_EQ(tight.over, stages[0].bytes.total() - Bytes(24 * kGiB));
  EXPECT_NE(tight.message.find("does not fit: stage 0"), std::string::npos) << tight.message;
  EXPECT_NE(tight.message.find("activations dominate"), std::string::npos) << tight.message;
}

// Over by less than 0.05 GiB: the message shows the shortfall in MiB and the two sizes to 3 decimals,
// never "24.0 GiB, 0.0 GiB more than the 24.0 GiB". Derivation: 24 GiB + 12 MiB needed of 24 GiB.
TEST(Fit, AShortfallUnderATenthOfAGiBStillReadsAsOne) {
  StageMemory s;
  s.bytes.weights = Bytes(24 * kGiB + 12 * kMiB);
  const FitVerdict v = check_fit({s}, Bytes(24 * kGiB));
  EXPECT_FALSE(v.fits);
  EXPECT_NE(v.message.find("needs 24.012 GiB per rank, 12.0 MiB more than the 24.000 GiB of the GPU"),
            std::string::npos)
      << v.message;
  EXPECT_EQ(v.message.find("0.0 GiB more"), std::string::npos) << v.message;
  s.bytes.weights = Bytes(24 * kGiB + 300);  // 300 B = 0.29 KiB
  EXPECT_NE(check_fit({s}, Bytes(24 * kGiB)).message.find(", 0.3 KiB more than the 24.000 GiB"), std::string::npos);
  s.bytes.weights = Bytes(24 * kGiB + 30);  // 30 B = 0.03 KiB
  EXPECT_NE(check_fit({s}, Bytes(24 * kGiB)).message.find(", 30 bytes more than the 24.000 GiB"), std::string::npos);
  s.bytes.weights = Bytes(25 * kGiB);
  EXPECT_NE(check_fit({s}, Bytes(24 * kGiB)).message.find("needs 25.0 GiB per rank, 1.0 GiB more than the 24.0 GiB"),
            std::string::npos);
}

}  // namespace
}  // namespace commscale

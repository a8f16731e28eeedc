// Memory per rank: ZeRO model states, Korthikanti activations, microbatches in flight, the fit check.

#include <gtest/gtest.h>

#include "parallel/plan_memory.hpp"
#include "parallel/schedule.hpp"
#include "workload/layer_ops.hpp"
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

TEST(ModelStates, MegatronLmKeepsGradientsAsItsDocumentCounts) {
  // NVIDIA/Megatron-LM docs/user-guide/features/dist_optimizer.md, bytes a parameter: bf16 parameters with
  // fp32 gradients 18, 6 + 12/d distributed; fp16 parameters and gradients 20, 4 + 16/d.
  const TransformerConfig bf16 = find_preset("gpt3-175b", "");
  const std::uint64_t psi = 1359461376, shard = 169932672;  // as above, d = 8
  const GradientStorage main_grad{DataType::kFloat32, false};
  const ModelStateBytes b0 = model_state_bytes(bf16, psi, 0, 8, Optimizer::kAdam, main_grad);
  EXPECT_EQ(b0.gradients.count(), 4 * psi);
  EXPECT_EQ((b0.weights + b0.gradients + b0.optimizer).count(), 18 * psi);
  const ModelStateBytes b1 = model_state_bytes(bf16, psi, 1, 8, Optimizer::kAdam, main_grad);
  EXPECT_EQ((b1.weights + b1.gradients + b1.optimizer).count(), 6 * psi + 12 * shard);
  TransformerConfig fp16 = bf16;
  fp16.dtype = DataType::kFloat16;
  const GradientStorage fp32_copy{std::nullopt, true};
  const ModelStateBytes h0 = model_state_bytes(fp16, psi, 0, 8, Optimizer::kAdam, fp32_copy);
  EXPECT_EQ((h0.weights + h0.gradients + h0.optimizer).count(), 20 * psi);
  const ModelStateBytes h1 = model_state_bytes(fp16, psi, 1, 8, Optimizer::kAdam, fp32_copy);
  EXPECT_EQ((h1.weights + h1.gradients + h1.optimizer).count(), 4 * psi + 16 * shard);
}

TEST(ModelStates, Adam8bitBlockwiseStates) {
  // bitsandbytes' Adam8bit in bf16 training: fp32 master (4) + two one-byte moments (2) per parameter, and
  // two fp32 absmax scales per block of 256: Psi = 1000 has 4 blocks (ceil(1000 / 256)), 6000 + 2 x 4 x 4.
  const TransformerConfig m = find_preset("tiny", "");
  EXPECT_EQ(optimizer_bytes_per_parameter(m, Optimizer::kAdam8bit), 6u);
  EXPECT_EQ(optimizer_state_bytes(m, 1000, Optimizer::kAdam8bit).count(), 6032u);
  const ModelStateBytes s0 = model_state_bytes(m, 1000, 0, 1, Optimizer::kAdam8bit);
  EXPECT_EQ((s0.weights + s0.gradients + s0.optimizer).count(), 2000u + 2000u + 6032u);
  // ZeRO-1 over d = 4 shards the state: 250 parameters, one block: 1500 + 8.
  EXPECT_EQ(model_state_bytes(m, 1000, 1, 4, Optimizer::kAdam8bit).optimizer.count(), 1508u);
  // Llama-2-7B's 6738415616 parameters: 6 Psi + 8 ceil(Psi / 256) = 40430493696 + 210575488 bytes
  // (37.85 GiB against adam's 12 Psi = 75.31 GiB).
  const std::uint64_t psi = 6738415616;
  EXPECT_EQ(optimizer_state_bytes(m, psi, Optimizer::kAdam8bit).count(), 40641069184u);
  // fp32 training keeps no master copy: the moments and scales only.
  TransformerConfig fp32 = m;
  fp32.dtype = DataType::kFloat32;
  EXPECT_EQ(optimizer_state_bytes(fp32, 1000, Optimizer::kAdam8bit).count(), 2032u);
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

// The count without the schedule is the schedule's, for every stage of every schedule over a grid.
TEST(InFlight, TheCountWithoutTheScheduleIsTheSchedules) {
  for (int pp = 1; pp <= 8; ++pp) {
    for (int stage = 0; stage < pp; ++stage) {
      for (int m = 1; m <= 24; ++m) {
        for (const ScheduleKind kind : {ScheduleKind::kGpipe, ScheduleKind::k1F1B}) {
          EXPECT_EQ(forwards_in_flight(kind, pp, stage, m, 1),
                    peak_in_flight(stage_schedule(kind, pp, stage, m, 1), {1.0}))
              << pp << " " << stage << " " << m;
        }
        if (pp < 2 || m % pp != 0) continue;  // interleaved: m a multiple of p
        for (int chunks = 2; chunks <= 4; ++chunks) {
          const std::vector<double> ones(static_cast<std::size_t>(chunks), 1.0);
          EXPECT_EQ(forwards_in_flight(ScheduleKind::kInterleaved, pp, stage, m, chunks),
                    peak_in_flight(stage_schedule(ScheduleKind::kInterleaved, pp, stage, m, chunks), ones))
              << pp << " " << stage << " " << m << " " << chunks;
        }
      }
    }
  }
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

// ZeRO-Offload and ZeRO-Infinity on Llama-2-7B (Psi = 6738415616: 32 layers of 4 h^2 + 3 h F + 2 h with
// h = 4096, F = 11008, and an untied 32000 x 4096 embedding and output, and the final norm).
TEST(Offload, OptimizerStatesAndGradientsMoveToTheHost) {
  const TransformerConfig m = find_preset("llama2-7b", "");
  const std::uint64_t psi = 6738415616;
  ParallelPlan p;
  p.zero_stage = 2;
  p.offload_optimizer = OffloadDevice::kCpu;
  const auto one = memory_per_stage(m, p, MemoryOptions{});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].parameters, psi);
  // GPU: the 16-bit weights; two 25 MiB gradient buckets; no optimizer state.
  EXPECT_EQ(one[0].bytes.weights.count(), 2 * psi);
  EXPECT_EQ(one[0].bytes.gradients.count(), 2 * 25 * kMiB);
  EXPECT_EQ(one[0].bytes.optimizer.count(), 0u);
  // Host: Adam's 12 Psi and the fp32 gradients 4 Psi (ZeRO-Offload's 16 Psi beside the GPU's 2 Psi).
  EXPECT_EQ(one[0].host.optimizer.count(), 12 * psi);
  EXPECT_EQ(one[0].host.gradients.count(), 4 * psi);
  EXPECT_EQ(one[0].host.weights.count(), 0u);

  // ZeRO-3 over dp 4 with the parameters offloaded too: Psi / 4 = 1684603904 a rank, all of it on the host
  // (2 + 4 + 12 bytes a parameter); the GPU keeps no weights beside ZeRO-3's two gathered layers.
  p.dp = 4;
  p.zero_stage = 3;
  p.global_batch = 4;
  p.offload_params = OffloadDevice::kCpu;
  const auto four = memory_per_stage(m, p, MemoryOptions{});
  const std::uint64_t shard = psi / 4;
  EXPECT_EQ(four[0].bytes.weights.count(), 0u);
  EXPECT_EQ(four[0].host.weights.count(), 2 * shard);
  EXPECT_EQ(four[0].host.total().count(), 18 * shard);
  EXPECT_GT(four[0].bytes.communication.count(), 0u);
  // A node of 4 ranks needs 4 x 18 x 1684603904 bytes = 112.96 GiB of host memory.
  EXPECT_TRUE(check_host_fit(four, 4, Bytes(256 * kGiB)).fits);
  const FitVerdict small = check_host_fit(four, 4, Bytes(100 * kGiB));
  EXPECT_FALSE(small.fits);
  EXPECT_EQ(small.over.count(), 4 * 18 * shard - 100 * kGiB);
  EXPECT_NE(small.message.find("host memory does not fit: 4 ranks x 28.2 GiB"), std::string::npos) << small.message;
}

TEST(Offload, ActivationsKeepTwoLayersOnTheGpu) {
  const TransformerConfig m = find_preset("llama2-7b", "");
  ParallelPlan p;
  p.flash_attention = true;
  const auto plain = memory_per_stage(m, p, MemoryOptions{});
  p.offload_activations = true;
  const auto off = memory_per_stage(m, p, MemoryOptions{});
  // One microbatch through 32 layers: 32 layer-microbatches in flight, 2 of them kept on the GPU.
  const Bytes layer = layer_activation_bytes(m, layer_sharding(p));
  EXPECT_EQ(plain[0].bytes.activations, layer * 32);
  EXPECT_EQ(off[0].bytes.activations, layer * 2);
  EXPECT_EQ(off[0].host.activations, layer * 30);
  EXPECT_EQ(largest_host_total(plain).count(), 0u);
}

}  // namespace
}  // namespace commscale

// The step program built from a plan: deadlock-free for many plans, FLOPs equal to the formulas,
// collectives and pipeline traffic counted by hand.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include "parallel/plan_memory.hpp"
#include "parallel/plan_summary.hpp"
#include "parallel/program_builder.hpp"
#include "program/checker.hpp"
#include "traffic_test_support.hpp"
#include "workload/flops.hpp"
#include "workload/memory.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

ParallelPlan builder_plan(int dp, int tp, int pp, int microbatches) {
  ParallelPlan p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.global_batch = dp * microbatches;
  return p;
}

std::string describe(const ParallelPlan& p) {
  return "dp " + std::to_string(p.dp) + " tp " + std::to_string(p.tp) + " pp " + std::to_string(p.pp) + " " +
         std::string(name(p.schedule)) + " v " + std::to_string(p.chunks) + " zero " + std::to_string(p.zero_stage) +
         (p.sequence_parallel ? " sp" : "") + " recompute " + std::string(name(p.recompute)) +
         (p.flash_attention ? " flash" : "") + (p.kernels == KernelSet::kEager ? " eager" : "");
}

// Hardware FLOPs per step summed over every rank, from the formulas: model FLOPs plus what the
// recompute mode and flash attention add per layer and sequence (see workload_flops_test).
double expected_hardware_flops(const TransformerConfig& m, const ParallelPlan& p) {
  const double s = static_cast<double>(m.seq), h = static_cast<double>(m.hidden);
  double extra = 0;  // per layer per sequence
  if (p.flash_attention) extra += 2 * s * s * h;
  if (p.recompute == Recompute::kSelective && !p.flash_attention) extra += 4 * s * s * h;
  if (p.recompute == Recompute::kFull) {
    const double without_logits = megatron_model_flops(m, 1).value() - 6 * s * h * static_cast<double>(m.vocab);
    extra += without_logits / 3 / m.layers;  // one more forward of each layer
  }
  return megatron_model_flops(m, p.global_batch).value() + extra * m.layers * p.global_batch;
}

TEST(ProgramBuilder, ManyPlansAreDeadlockFreeAndCountTheRightFlops) {
  const TransformerConfig tiny = find_preset("tiny", "");  // 8 layers, 8 heads, 4 KV heads
  int built = 0;
  int variant = 0;
  for (int tp : {1, 2, 4}) {
    for (int pp : {1, 2, 4}) {
      for (int dp : {1, 2}) {
        for (ScheduleKind schedule : {ScheduleKind::kGpipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved}) {
          if (schedule == ScheduleKind::kInterleaved && pp == 1) continue;
          for (int m : {1, 2 * pp}) {
            if (schedule == ScheduleKind::kInterleaved && m % pp != 0) continue;
            ParallelPlan p = builder_plan(dp, tp, pp, m);
            p.schedule = schedule;
            p.chunks = schedule == ScheduleKind::kInterleaved ? 2 : 1;
            // Cycle through the other options so that each appears with every shape.
            ++variant;
            p.zero_stage = variant % 4;
            p.sequence_parallel = tp > 1 && variant % 2 == 0;
            p.recompute = static_cast<Recompute>(variant % 3);
            p.flash_attention = variant % 5 == 0;
            p.kernels = variant % 3 == 1 ? KernelSet::kEager : KernelSet::kFused;
            p.order = variant % 2 == 0 ? "tp-dp-pp" : "tp-pp-dp";
            p.bucket_bytes = Bytes(variant % 3 == 0 ? 1 : 64 * kKiB);
            const ProgramSet set = build_program(CheckedPlan(tiny, p));
            const ProgramCheck check = check_program(set);
            ASSERT_TRUE(check.ok()) << describe(p) << ": " << check.problems.front();
            const PlanSummary summary = summarize_plan(tiny, p, set, {}, std::nullopt);
            EXPECT_NEAR(summary.hardware_flops_per_step.value() / expected_hardware_flops(tiny, p), 1.0, 1e-12)
                << describe(p);
            ++built;
          }
        }
      }
    }
  }
  EXPECT_EQ(built, 84);
}

TEST(ProgramBuilder, BareStackUntiedAndFp32AreDeadlockFree) {
  TransformerConfig m = find_preset("tiny", "");
  for (int which = 0; which < 3; ++which) {
    TransformerConfig model = m;
    if (which == 0) model.vocab = 0;
    if (which == 1) model.tied_embeddings = false;
    if (which == 2) model.dtype = DataType::kFloat32;
    ParallelPlan p = builder_plan(2, 2, 4, 8);
    p.schedule = ScheduleKind::kInterleaved;
    p.chunks = 2;
    p.zero_stage = 3;
    const ProgramSet set = build_program(CheckedPlan(model, p));
    const ProgramCheck check = check_program(set);
    EXPECT_TRUE(check.ok()) << which << ": " << (check.ok() ? "" : check.problems.front());
    EXPECT_EQ(set.ranks[0].groups.size(), which == 0 || which == 1 ? 4u : 5u);  // the embedding group
  }
}

using commscale::testing::traffic;

TEST(ProgramBuilder, TrafficCountedByHand) {
  // tiny: 8 layers, h = 128, s = 64, V = 1024, bf16. dp 2 x tp 2 x pp 2, 1F1B, m = 4, ZeRO 0.
  const TransformerConfig tiny = find_preset("tiny", "");
  ParallelPlan p = builder_plan(2, 2, 2, 4);
  p.bucket_bytes = Bytes(1 << 30);  // one bucket per stage
  const ProgramSet set = build_program(CheckedPlan(tiny, p));
  ASSERT_EQ(set.programs.size(), 2u);
  const std::uint64_t hidden_bytes = 64 * 128 * 2;  // T h w: one microbatch's hidden state
  // Stage 0 (rank 0): per microbatch 4 layers x (2 forward + 2 backward all-reduces) + the embedding's
  // all-reduce = 17; x 4 microbatches = 68, each of T h w bytes.
  auto t0 = traffic(set, 0);
  EXPECT_EQ(t0["tp all_reduce"].count, 68u);
  EXPECT_EQ(t0["tp all_reduce"].bytes.count(), 68 * hidden_bytes);
  EXPECT_EQ(t0["pp-fwd send"].count, 4u);
  EXPECT_EQ(t0["pp-fwd send"].bytes.count(), 4 * hidden_bytes);
  EXPECT_EQ(t0["pp-bwd recv"].count, 4u);
  // One data-parallel all-reduce of every gradient of the stage: 4 layers + the embedding (512 x 128
  // word rows per tp rank, 64 x 128 positions), 2 bytes each.
  const std::uint64_t stage0_params = 4 * layer_parameters(tiny, 2).total() + 512 * 128 + 64 * 128;
  EXPECT_EQ(t0["dp all_reduce"].count, 1u);
  EXPECT_EQ(t0["dp all_reduce"].bytes.count(), 2 * stage0_params);
  // Tied embeddings across stages: one all-reduce of the 512 x 128 table shard with the last stage.
  EXPECT_EQ(t0["embedding all_reduce"].count, 1u);
  EXPECT_EQ(t0["embedding all_reduce"].bytes.count(), 2u * 512 * 128);
  // Stage 1 (rank 4 in tp-dp-pp): 4 layers x 4 + the logits dgrad all-reduce + 3 fp32 loss all-reduces.
  auto t1 = traffic(set, 4);
  EXPECT_EQ(t1["tp all_reduce"].count, 4u * (16 + 1 + 3));
  EXPECT_EQ(t1["tp all_reduce"].bytes.count(), 4 * (17 * hidden_bytes + 3 * 64 * 4));
}

TEST(ProgramBuilder, BucketsAndZeroStages) {
  const TransformerConfig tiny = find_preset("tiny", "");
  const auto count = [](const ProgramSet& set, int rank, const std::string& key) {
    return traffic(set, rank)[key].count;
  };
  // Buckets of one byte close after every gradient-producing op: per layer fc2, fc1, ln2, proj, qkv,
  // ln1 = 6; stage 0 of pp 2 has 4 layers and the embedding: 25 buckets, once per step (ZeRO 0 and 1).
  ParallelPlan p = builder_plan(2, 1, 2, 4);
  p.bucket_bytes = Bytes(1);
  EXPECT_EQ(count(build_program(CheckedPlan(tiny, p)), 0, "dp all_reduce"), 25u);
  p.zero_stage = 1;
  const ProgramSet z1 = build_program(CheckedPlan(tiny, p));
  EXPECT_EQ(count(z1, 0, "dp reduce_scatter"), 25u);
  EXPECT_EQ(count(z1, 0, "dp all_gather"), 25u);  // the updated parameters, after the optimizer
  // ZeRO 2 reduces every microbatch: 4 x 25.
  p.zero_stage = 2;
  EXPECT_EQ(count(build_program(CheckedPlan(tiny, p)), 0, "dp reduce_scatter"), 100u);
  // ZeRO 3: per microbatch, every unit (4 layers + embedding) gathers its parameters forward and
  // backward and reduce-scatters its gradients: 4 x 5 x 2 gathers and 4 x 5 reduce-scatters.
  p.zero_stage = 3;
  const ProgramSet z3 = build_program(CheckedPlan(tiny, p));
  EXPECT_EQ(count(z3, 0, "dp all_gather"), 40u);
  EXPECT_EQ(count(z3, 0, "dp reduce_scatter"), 20u);
  // Reduce-scatter sizes split into whole 16-byte shards over dp.
  for (const Op& op : ops_of(z3, 0)) {
    const auto* c = std::get_if<CollectiveOp>(&op.payload);
    if (c != nullptr && op.stream == Stream::kDp) {
      EXPECT_EQ(c->bytes.count() % (2 * 16), 0u) << op.name;
    }
  }
}

TEST(ProgramBuilder, OffloadCopiesCountedByHand) {
  // tiny (8 layers, h 128, s 64, V 1024, bf16), dp 2, 4 microbatches of one sequence, ZeRO-3 with the
  // optimizer, the parameters and the activations offloaded.
  const TransformerConfig tiny = find_preset("tiny", "");
  ParallelPlan p = builder_plan(2, 1, 1, 4);
  p.zero_stage = 3;
  p.offload_optimizer = OffloadDevice::kCpu;
  p.offload_params = OffloadDevice::kCpu;
  p.offload_activations = true;
  const ProgramSet set = build_program(CheckedPlan(tiny, p));
  const ProgramCheck check = check_program(set);
  ASSERT_TRUE(check.ok()) << check.problems.front();
  // Every unit (the embedding, 8 layers, the head: norm and the tied output) copies its parameter shard in
  // before each use, forward and backward, every microbatch: shards of whole 16-byte pieces over dp 2.
  const auto shard = [](std::uint64_t parameters) { return (parameters + 15) / 16 * 16 / 2 * 2; };
  const std::uint64_t units = shard(embedding_parameters(tiny, 1)) + 8 * shard(layer_parameters(tiny, 1).total()) +
                              shard(norm_parameters(tiny) + output_parameters(tiny, 1, 1));
  // Each layer's activations out after its forward and back before its backward: without recompute, by
  // memory.hpp's count for one sequence.
  const std::uint64_t layer = layer_activation_bytes(tiny, layer_sharding(p)).count();
  auto t = traffic(set, 0);
  EXPECT_EQ(t["offload to_device"].count, 4u * (2 * 10 + 8));
  EXPECT_EQ(t["offload to_device"].bytes.count(), 4 * (2 * units + 8 * layer));
  EXPECT_EQ(t["offload to_host"].count, 4u * 8);
  EXPECT_EQ(t["offload to_host"].bytes.count(), 4 * 8 * layer);
  // On their own streams by direction; each gather waits for its shard's copy.
  for (const Op& op : ops_of(set, 0)) {
    const auto* c = std::get_if<HostCopy>(&op.payload);
    if (c != nullptr) {
      EXPECT_EQ(op.stream, copy_stream(c->direction)) << op.name;
    }
    const auto* g = std::get_if<CollectiveOp>(&op.payload);
    if (g == nullptr || g->kind != Collective::kAllGather) continue;
    const bool after_copy = std::any_of(op.deps.begin(), op.deps.end(), [&](OpId d) {
      return std::holds_alternative<HostCopy>(ops_of(set, 0)[d].payload);
    });
    EXPECT_TRUE(after_copy) << op.name;
  }
  // One GPU (ZeRO-Infinity on a single card): no gathers, the same copies.
  ParallelPlan one = p;
  one.dp = 1;
  one.global_batch = 4;
  const ProgramSet single = build_program(CheckedPlan(tiny, one));
  ASSERT_TRUE(check_program(single).ok());
  EXPECT_EQ(traffic(single, 0)["offload to_device"].count, 4u * (2 * 10 + 8));
  EXPECT_EQ(traffic(single, 0).count("dp all_gather"), 0u);
}

TEST(ProgramBuilder, EagerKernelsAccumulateEveryMicrobatchButTheFirst) {
  // Each stage adds the weight gradients of microbatches 1..m-1 to those of microbatch 0: (m - 1)
  // times its parameters, embedding and tied output copy included.
  const TransformerConfig tiny = find_preset("tiny", "");
  for (ScheduleKind schedule : {ScheduleKind::kGpipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved}) {
    ParallelPlan p = builder_plan(2, 2, 2, 4);
    p.schedule = schedule;
    p.chunks = schedule == ScheduleKind::kInterleaved ? 2 : 1;
    p.kernels = KernelSet::kEager;
    const ProgramSet set = build_program(CheckedPlan(tiny, p));
    ASSERT_TRUE(check_program(set).ok()) << describe(p);
    ASSERT_EQ(set.programs.size(), 2u);  // one per stage
    for (int stage = 0; stage < p.pp; ++stage) {
      std::uint64_t added = 0;
      for (const Op& op : set.programs[static_cast<std::size_t>(stage)]) {
        if (!op.name.ends_with(".accumulate")) continue;
        EXPECT_GT(op.microbatch, 0) << op.name;
        added += std::get<MemoryKernel>(op.payload).elements;
      }
      EXPECT_EQ(added, 3 * stage_parameters(tiny, p, stage)) << describe(p) << " stage " << stage;
    }
  }
}

TEST(ProgramBuilder, NamesStreamsAndDependencies) {
  const TransformerConfig tiny = find_preset("tiny", "");
  ParallelPlan p = builder_plan(1, 2, 2, 2);
  const ProgramSet set = build_program(CheckedPlan(tiny, p));
  const std::vector<Op>& stage1 = ops_of(set, 2);  // rank 2 = tp 0 of stage 1
  // Stage 1 starts by receiving microbatch 0, and its first layer op waits for that receive.
  EXPECT_EQ(stage1[0].name, "mb0.fwd.recv");
  EXPECT_EQ(stage1[0].stream, Stream::kPpRecv);
  EXPECT_EQ(stage1[1].name, "mb0.L4.fwd.ln1");
  EXPECT_EQ(stage1[1].deps, (std::vector<OpId>{0}));
  EXPECT_EQ(stage1[2].name, "mb0.L4.fwd.qkv");
  const auto& recv = std::get<PointToPoint>(stage1[0].payload);
  EXPECT_EQ(recv.peer, 0);  // stage 0 within the pipeline group
  EXPECT_EQ(world_peer(set.ranks[2], recv), 0);
  EXPECT_EQ(set.ranks[2].groups[kPpForwardGroup].role, GroupRole::kPpForward);
  EXPECT_EQ(stage1.back().name, "step.optimizer");
  // The all-reduce after the attention projection waits for it; the residual waits for the all-reduce.
  for (std::size_t i = 0; i < stage1.size(); ++i) {
    if (stage1[i].name != "mb0.L4.fwd.attn.all_reduce") continue;
    EXPECT_EQ(stage1[i].stream, Stream::kTp);
    EXPECT_EQ(stage1[stage1[i].deps.at(0)].name, "mb0.L4.fwd.attn.proj");
    EXPECT_EQ(stage1[i + 1].name, "mb0.L4.fwd.attn.residual");
    EXPECT_EQ(stage1[i + 1].deps, (std::vector<OpId>{static_cast<OpId>(i)}));
  }
}

TEST(ProgramBuilder, Gpt3_175bOn1024RanksBuildsAndChecksFast) {
  ParallelPlan p = builder_plan(8, 8, 16, 64);
  p.sequence_parallel = true;
  p.zero_stage = 1;
  const auto start = std::chrono::steady_clock::now();
  const ProgramSet set = build_program(CheckedPlan(find_preset("gpt3-175b", ""), p));
  const ProgramCheck check = check_program(set);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(set.ranks.size(), 1024u);
  EXPECT_EQ(set.programs.size(), 16u);
  EXPECT_LT(seconds, 5.0);  // the benchmark (results/program-build-bench) has the real number
}

}  // namespace
}  // namespace commscale

// --framework: the defaults each framework sets, its parsing, and what "gradients reduced after the
// backward" does to the step program (one reduction after the stage's last backward op).

#include <gtest/gtest.h>

#include <algorithm>

#include "input_error_matcher.hpp"
#include "parallel/framework.hpp"
#include "parallel/plan_memory.hpp"
#include "parallel/program_builder.hpp"
#include "program/checker.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

TEST(Framework, EachNameParsesToItsOwnDefaults) {
  for (const FrameworkDefaults& d : frameworks()) {
    EXPECT_EQ(parse_framework(d.name, "--framework"), d.framework);
    EXPECT_EQ(&defaults_of(d.framework), &d) << d.name;
    EXPECT_EQ(name(d.framework), d.name);
  }
  EXPECT_EQ(name(kDefaultFramework), "megatron-lm");
}

TEST(Framework, WhatEachFrameworkRuns) {
  const FrameworkDefaults& megatron = defaults_of(Framework::kMegatronLm);
  EXPECT_EQ(megatron.kernels, KernelSet::kFused);
  EXPECT_FALSE(megatron.overlap_grad_reduce);  // Megatron-Core's --overlap-grad-reduce is off by default
  EXPECT_EQ(megatron.host_row, "megatron");
  const FrameworkDefaults& ddp = defaults_of(Framework::kPytorchDdp);
  EXPECT_EQ(ddp.kernels, KernelSet::kEager);
  EXPECT_TRUE(ddp.overlap_grad_reduce);
  EXPECT_EQ(ddp.optimizer, Optimizer::kAdamW);
  EXPECT_EQ(defaults_of(Framework::kPytorchFsdp).zero_stage, 3);
  const FrameworkDefaults& own = defaults_of(Framework::kCommscale);
  EXPECT_EQ(own.host_row, "commscale");
  EXPECT_TRUE(own.overlap_grad_reduce);
}

TEST(Framework, AnUnknownNameIsRefusedNamingTheFlagAndTheChoices) {
  EXPECT_TRUE(testing::throws_input_error(
      [] { (void)parse_framework("deepspeed", "--framework"); },
      {"--framework", "deepspeed", "megatron-lm, megatron-deepspeed, pytorch-ddp, pytorch-fsdp, commscale"}));
}

// The data-parallel gradient buckets of rank 0 and the position of its last backward compute op.
struct Reductions {
  std::vector<OpId> dp_ops;
  OpId last_backward_compute = 0;
};

Reductions reductions(const ProgramSet& set) {
  Reductions r;
  const std::vector<Op>& ops = set.programs.at(0);
  for (OpId id = 0; id < ops.size(); ++id) {
    if (ops[id].stream == Stream::kDp && ops[id].name.find("bucket") != std::string::npos) r.dp_ops.push_back(id);
    if (ops[id].stream == Stream::kCompute && ops[id].phase == Phase::kBackward) r.last_backward_compute = id;
  }
  return r;
}

TEST(Framework, GradientsReducedAfterTheBackwardAreOneReductionAfterItsLastOp) {
  // tiny (8 layers, h 128) on dp 2, 4 microbatches, 1 MiB buckets: with overlap, several buckets, the
  // first issued before the last backward op; without, one, issued after it.
  const TransformerConfig tiny = find_preset("tiny", "");
  ParallelPlan p;
  p.dp = 2;
  p.global_batch = 8;
  p.bucket_bytes = Bytes(kMiB / 4);
  const Reductions overlapped = reductions(build_program(CheckedPlan(tiny, p)));
  ASSERT_GT(overlapped.dp_ops.size(), 1u);
  EXPECT_LT(overlapped.dp_ops.front(), overlapped.last_backward_compute);
  p.overlap_grad_reduce = false;
  const ProgramSet after = build_program(CheckedPlan(tiny, p));
  EXPECT_TRUE(check_program(after).ok());
  const Reductions one = reductions(after);
  ASSERT_EQ(one.dp_ops.size(), 1u);
  EXPECT_GT(one.dp_ops.front(), one.last_backward_compute);
}

TEST(Framework, WithInterleavingTheReductionWaitsForEveryChunk) {
  const TransformerConfig tiny = find_preset("tiny", "");
  ParallelPlan p;
  p.dp = 2;
  p.pp = 2;
  p.chunks = 2;
  p.schedule = ScheduleKind::kInterleaved;
  p.global_batch = 8;
  p.overlap_grad_reduce = false;
  const ProgramSet set = build_program(CheckedPlan(tiny, p));
  EXPECT_TRUE(check_program(set).ok());
  const Reductions one = reductions(set);
  ASSERT_EQ(one.dp_ops.size(), 1u);
  EXPECT_GT(one.dp_ops.front(), one.last_backward_compute);
}

// PyTorch DDP copies each gradient into its bucket (a copy kernel the bucket's all-reduce waits for) and each
// bucket back after its all-reduce; the copies move every parameter's gradient once each way.
TEST(Framework, DdpCopiesEveryGradientIntoItsBucketAndBack) {
  const TransformerConfig tiny = find_preset("tiny", "");
  ParallelPlan p;
  p.dp = 2;
  p.global_batch = 8;  // 4 microbatches: only the last one's backward reduces (no_sync before it)
  p.bucket_bytes = Bytes(kMiB / 4);
  p.framework = Framework::kPytorchDdp;
  const ProgramSet set = build_program(CheckedPlan(tiny, p));
  EXPECT_TRUE(check_program(set).ok());
  const std::vector<Op>& ops = set.programs.at(0);
  const auto w = static_cast<std::uint64_t>(size_of(tiny.dtype));
  std::uint64_t copied_in = 0;
  std::uint64_t reduced = 0;
  std::vector<const Op*> buckets;
  std::vector<const Op*> copies_back;
  for (const Op& op : ops) {
    const bool copy_in = op.name.ends_with(".bucket_copy");
    const bool copy_back = op.name.ends_with(".copy_back");
    if (copy_in || copy_back) {
      EXPECT_EQ(op.stream, Stream::kCompute) << op.name;
      const auto& k = std::get<MemoryKernel>(op.payload);
      EXPECT_EQ(k.kind, MemoryKernelKind::kCopy);
      EXPECT_EQ(k.bytes_read, k.bytes_written);
      EXPECT_EQ(k.bytes_read.count(), k.elements * w);
      EXPECT_EQ(op.microbatch, 3) << op.name;
      if (copy_in) copied_in += k.elements;
      if (copy_back) copies_back.push_back(&op);
    }
    if (op.stream == Stream::kDp && op.name.find("all_reduce") != std::string::npos) {
      reduced += std::get<CollectiveOp>(op.payload).bytes.count() / w;
      buckets.push_back(&op);
      ASSERT_EQ(op.deps.size(), 1u);
      EXPECT_TRUE(ops[op.deps[0]].name.ends_with(".bucket_copy")) << op.name << " waits for its last copy";
    }
  }
  EXPECT_EQ(copied_in, stage_parameters(tiny, p, 0));
  EXPECT_EQ(reduced, copied_in);
  ASSERT_GT(buckets.size(), 1u);
  ASSERT_EQ(copies_back.size(), buckets.size());
  for (std::size_t k = 0; k < buckets.size(); ++k) {
    const Op& back = *copies_back[k];
    EXPECT_EQ(std::get<MemoryKernel>(back.payload).elements * w,
              std::get<CollectiveOp>(buckets[k]->payload).bytes.count());
    EXPECT_NE(std::find(back.deps.begin(), back.deps.end(), buckets[k]->id), back.deps.end()) << back.name;
  }
  const Op& optimizer = ops.back();
  ASSERT_EQ(optimizer.name, "step.optimizer");
  EXPECT_NE(std::find(optimizer.deps.begin(), optimizer.deps.end(), copies_back.back()->id), optimizer.deps.end());

  // Megatron-LM (and commscale's own train) reduce their gradient buffer in place: no copies.
  p.framework = Framework::kMegatronLm;
  const ProgramSet megatron = build_program(CheckedPlan(tiny, p));  // kept: the loop reads its programs
  for (const Op& op : megatron.programs.at(0)) {
    EXPECT_FALSE(op.name.ends_with("bucket_copy") || op.name.ends_with("copy_back")) << op.name;
  }
}

// The data-parallel reduction's type and kind per framework (grad_sync.cpp), for tiny (bf16, tied embeddings)
// on dp 2 x pp 2, rank 0 (stage 0: 4 layers and the embedding, P parameters; the tied table T = 1024 x 128):
//   commscale          all-reduce 2 P bytes (bf16), the tied embedding 2 T;
//   megatron-lm        all-reduce 4 P (fp32 main_grad: accumulate_allreduce_grads_in_fp32 in bf16), embedding 4 T;
//   megatron-deepspeed BF16_Optimizer under --zero 1: the whole gradient all-reduced in bf16 (2 P, not a
//                      reduce-scatter), the bf16 weights all-gathered after the update (2 P), embedding fp32 (4 T).
TEST(Framework, GradientReductionTypeAndKindPerFramework) {
  const TransformerConfig tiny = find_preset("tiny", "");
  ASSERT_EQ(tiny.dtype, DataType::kBFloat16);
  ASSERT_TRUE(tiny.tied_embeddings);
  ParallelPlan p;
  p.dp = 2;
  p.pp = 2;
  p.global_batch = 8;
  p.overlap_grad_reduce = false;
  const std::uint64_t P = stage_parameters(tiny, p, 0);
  const std::uint64_t T = 1024 * 128;
  struct Case {
    Framework f;
    int zero;
    std::uint64_t reduced, gathered, embedding;  // bytes
    DataType wire;
  };
  const Case cases[] = {
      {Framework::kCommscale, 0, 2 * P, 0, 2 * T, DataType::kBFloat16},
      {Framework::kMegatronLm, 0, 4 * P, 0, 4 * T, DataType::kFloat32},
      {Framework::kMegatronDeepSpeed, 1, 2 * P, 2 * P, 4 * T, DataType::kBFloat16},
  };
  for (const Case& c : cases) {
    p.framework = c.f;
    p.zero_stage = c.zero;
    const ProgramSet set = build_program(CheckedPlan(tiny, p));
    EXPECT_TRUE(check_program(set).ok());
    std::uint64_t reduced = 0, gathered = 0, embedding = 0;
    for (const Op& op : set.programs.at(0)) {
      const auto* coll = std::get_if<CollectiveOp>(&op.payload);
      if (coll == nullptr) continue;
      if (op.name.starts_with("dp.bucket")) {
        EXPECT_EQ(coll->kind, Collective::kAllReduce) << name(c.f) << " " << op.name;
        EXPECT_EQ(coll->dtype, c.wire) << name(c.f);
        reduced += coll->bytes.count();
      }
      if (op.name.ends_with(".all_gather") && op.name.starts_with("step.bucket")) gathered += coll->bytes.count();
      if (op.name == "step.embedding_grads.all_reduce") embedding += coll->bytes.count();
    }
    EXPECT_EQ(reduced, c.reduced) << name(c.f);
    EXPECT_EQ(gathered, c.gathered) << name(c.f);
    EXPECT_EQ(embedding, c.embedding) << name(c.f);
  }
  // Megatron-LM's distributed optimizer reduce-scatters the fp32 gradients and all-gathers the bf16 weights.
  p.framework = Framework::kMegatronLm;
  p.zero_stage = 1;
  const ProgramSet distributed = build_program(CheckedPlan(tiny, p));  // kept: the loop reads its programs
  for (const Op& op : distributed.programs.at(0)) {
    if (op.name.starts_with("dp.bucket")) {
      const auto& coll = std::get<CollectiveOp>(op.payload);
      EXPECT_EQ(coll.kind, Collective::kReduceScatter);
      EXPECT_EQ(coll.dtype, DataType::kFloat32);
      EXPECT_GE(coll.bytes.count(), 4 * P);
      EXPECT_LT(coll.bytes.count(), 4 * (P + 16));  // padded to a multiple of dp x 8 elements
    }
    if (op.name.starts_with("step.bucket")) {
      EXPECT_EQ(std::get<CollectiveOp>(op.payload).dtype, DataType::kBFloat16);
    }
  }
}

// The gradients in memory as each framework keeps them: Megatron-LM's fp32 main_grad in bf16 (4 bytes a
// parameter) and its optimizer's fp32 copy in fp16 (4 more, sharded with its state); the model's type
// elsewhere, and with any optimizer but mixed-precision Adam.
TEST(Framework, GradientsInMemoryAsTheFrameworkKeepsThem) {
  const TransformerConfig bf16 = find_preset("tiny", "");
  ParallelPlan p;
  p.dp = 2;
  p.global_batch = 8;
  p.zero_stage = 1;
  const std::uint64_t P = stage_parameters(bf16, p, 0);
  const auto states = [&](const TransformerConfig& m, Framework f, Optimizer o) {
    p.framework = f;
    p.optimizer = o;
    return memory_per_stage(m, p, MemoryOptions{}).at(0).bytes;
  };
  EXPECT_EQ(states(bf16, Framework::kMegatronLm, Optimizer::kAdam).gradients.count(), 4 * P);
  EXPECT_EQ(states(bf16, Framework::kCommscale, Optimizer::kAdam).gradients.count(), 2 * P);
  EXPECT_EQ(states(bf16, Framework::kMegatronDeepSpeed, Optimizer::kAdam).gradients.count(), 2 * P);
  EXPECT_EQ(states(bf16, Framework::kMegatronLm, Optimizer::kAdamW).gradients.count(), 2 * P);
  TransformerConfig fp16 = bf16;
  fp16.dtype = DataType::kFloat16;
  const MemoryBreakdown megatron = states(fp16, Framework::kMegatronLm, Optimizer::kAdam);
  const MemoryBreakdown commscale = states(fp16, Framework::kCommscale, Optimizer::kAdam);
  EXPECT_EQ(megatron.gradients.count(), 2 * P);
  EXPECT_EQ(megatron.optimizer.count(), commscale.optimizer.count() + 4 * ((P + 1) / 2));
}

}  // namespace
}  // namespace commscale

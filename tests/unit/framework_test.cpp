// --framework: the defaults each framework sets, its parsing, and what "gradients reduced after the
// backward" does to the step program (one reduction after the stage's last backward op).

#include <gtest/gtest.h>

#include <algorithm>

#include "input_error_matcher.hpp"
#include "parallel/framework.hpp"
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

}  // namespace
}  // namespace commscale

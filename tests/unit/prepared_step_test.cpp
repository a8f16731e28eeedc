// The prepared step both engines take: the plan checked once (CheckedPlan), the program built and
// checked once (prepare_step), group roles and their names.

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "input_error_matcher.hpp"
#include "parallel/prepared_step.hpp"
#include "parallel/program_builder.hpp"
#include "parallel/rank_layout.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

ParallelPlan three_d() {
  ParallelPlan p;
  p.dp = 2;
  p.tp = 2;
  p.pp = 2;
  p.global_batch = 8;
  p.order = "tp-pp-dp";
  return p;
}

TEST(CheckedPlan, ChecksOnceWhereThePlanEnters) {
  const TransformerConfig tiny = find_preset("tiny", "");
  const CheckedPlan ok(tiny, three_d());
  EXPECT_EQ(ok.world(), 8);
  EXPECT_EQ(ok.plan().order, "tp-pp-dp");
  ParallelPlan bad = three_d();
  bad.global_batch = 3;  // not a multiple of dp 2 x micro-batch 1
  EXPECT_TRUE(testing::throws_input_error([&] { (void)CheckedPlan(tiny, bad); }, {"--global-batch", "3"}));
  EXPECT_TRUE(testing::throws_input_error([&] { (void)CheckedPlan(tiny, three_d(), 4); }, {"--world", "not 4"}));
}

TEST(PreparedStep, BuiltCheckedAndSummarizedOnce) {
  const CheckedPlan plan(find_preset("tiny", ""), three_d());
  const PreparedStep step = prepare_step(plan, {}, Bytes(80 * kGiB));
  EXPECT_TRUE(step.summary.program_problems.empty());
  EXPECT_NO_THROW(step.require_deadlock_free());
  ASSERT_TRUE(step.summary.fit.has_value());
  EXPECT_EQ(step.summary.memory.size(), 2u);  // one entry per stage
  // The summary's GEMM FLOPs are the program's: every rank's GEMMs summed.
  Flops gemms;
  for (int r = 0; r < step.program.world_size; ++r) {
    for (const Op& op : ops_of(step.program, r)) {
      if (const auto* g = std::get_if<Gemm>(&op.payload)) gemms += g->flops;
    }
  }
  EXPECT_DOUBLE_EQ(step.summary.hardware_flops_per_step.value(), gemms.value());
  // Stages from the rank layout, not from group names: with order tp-pp-dp, ranks 0-1 are stage 0 and
  // ranks 2-3 stage 1 (tp varies fastest, then pp), and so on for the second replica.
  const RankLayout layout(2, 2, 2, "tp-pp-dp");
  for (int r = 0; r < 8; ++r) EXPECT_EQ(step.stage_of(r), layout.coords(r).pp) << r;
  EXPECT_EQ(step.stage_of(2), 1);
  EXPECT_EQ(step.stage_of(4), 0);
  PreparedStep broken = step;
  broken.summary.program_problems = {"rank 0 waits forever"};
  EXPECT_THROW(broken.require_deadlock_free(), RuntimeFailure);
}

TEST(GroupRole, NamesHandlesAndTheBreakdownsJoin) {
  for (const GroupRole role :
       {GroupRole::kTp, GroupRole::kDp, GroupRole::kPpForward, GroupRole::kPpBackward, GroupRole::kEmbedding}) {
    EXPECT_EQ(parse_group_role(name(role), "test"), role);
  }
  EXPECT_EQ(name(GroupRole::kPpBackward), "pp-bwd");
  EXPECT_EQ(charged_name(GroupRole::kPpForward), "pp");
  EXPECT_EQ(charged_name(GroupRole::kPpBackward), "pp");
  EXPECT_EQ(charged_name(GroupRole::kEmbedding), "embedding");
  EXPECT_TRUE(is_pipeline(GroupRole::kPpBackward));
  EXPECT_FALSE(is_pipeline(GroupRole::kDp));
  // The builder gives each rank its groups in role order: a group's handle is its role.
  const ProgramSet set = build_program(CheckedPlan(find_preset("tiny", ""), three_d()));
  for (const RankProgram& rp : set.ranks) {
    for (std::size_t h = 0; h < rp.groups.size(); ++h) EXPECT_EQ(handle_of(rp.groups[h].role), h);
  }
}

}  // namespace
}  // namespace commscale

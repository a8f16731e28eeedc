// Uneven pipeline stages (Megatron-LM's --decoder-first/last-pipeline-num-layers): the layers each stage
// holds, counted by hand; the splits refused; the step program and memory of an uneven plan.

#include <gtest/gtest.h>

#include <set>

#include "input_error_matcher.hpp"
#include "parallel/plan_memory.hpp"
#include "parallel/program_builder.hpp"
#include "program/checker.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

ParallelPlan pipeline(int pp, int first, int last, int microbatches) {
  ParallelPlan p;
  p.pp = pp;
  p.global_batch = microbatches;
  p.first_stage_layers = first;
  p.last_stage_layers = last;
  return p;
}

TransformerConfig with_layers(int layers) {
  TransformerConfig m = find_preset("tiny", "");
  m.layers = layers;
  return m;
}

TEST(UnevenStages, A126LayerModelOnPp16) {
  // 7 + 14 x 8 + 7 = 126.
  const TransformerConfig m = with_layers(126);
  const ParallelPlan p = pipeline(16, 7, 7, 16);
  validate_plan(m, p, 16);
  EXPECT_EQ(virtual_stage_layers(m, p, 0).first, 0);
  EXPECT_EQ(virtual_stage_layers(m, p, 0).count, 7);
  EXPECT_EQ(virtual_stage_layers(m, p, 1).first, 7);
  EXPECT_EQ(virtual_stage_layers(m, p, 1).count, 8);
  EXPECT_EQ(virtual_stage_layers(m, p, 14).first, 7 + 13 * 8);
  EXPECT_EQ(virtual_stage_layers(m, p, 15).first, 119);
  EXPECT_EQ(virtual_stage_layers(m, p, 15).count, 7);
  int total = 0;
  for (int s = 0; s < 16; ++s) total += stage_layers(m, p, s);
  EXPECT_EQ(total, 126);
  EXPECT_EQ(most_stage_layers(m, p), 8);
}

TEST(UnevenStages, OneEndAloneAndBloomsSplit) {
  // BLOOM-176B: 70 layers on pp 12 as 5 + 10 x 6 + 5; the first stage alone: 70 = 4 + 11 x 6.
  validate_plan(with_layers(70), pipeline(12, 5, 5, 12), 12);
  const TransformerConfig m = with_layers(70);
  const ParallelPlan first_only = pipeline(12, 4, 0, 12);
  validate_plan(m, first_only, 12);
  EXPECT_EQ(stage_layers(m, first_only, 0), 4);
  EXPECT_EQ(stage_layers(m, first_only, 11), 6);
  EXPECT_EQ(virtual_stage_layers(m, first_only, 11).first, 64);
}

TEST(UnevenStages, SplitsThatDoNotDivideAreRefusedNamingTheFlag) {
  const TransformerConfig m = with_layers(8);
  EXPECT_TRUE(testing::throws_input_error([&] { validate_plan(m, pipeline(3, 3, 0, 3), 3); },
                                          {"--first-stage-layers", "leave 5 of 8 layers for 2 stage(s)"}));
  EXPECT_TRUE(testing::throws_input_error([&] { validate_plan(m, pipeline(1, 3, 0, 1), 1); },
                                          {"--first-stage-layers", "given with pp 1"}));
  EXPECT_TRUE(testing::throws_input_error([&] { validate_plan(m, pipeline(2, 0, 9, 2), 2); },
                                          {"--last-stage-layers", "leave -1 of 8 layers"}));
  ParallelPlan interleaved = pipeline(2, 2, 0, 4);
  interleaved.schedule = ScheduleKind::kInterleaved;
  interleaved.chunks = 2;
  EXPECT_TRUE(testing::throws_input_error([&] { validate_plan(m, interleaved, 2); },
                                          {"--first-stage-layers", "2 chunks per stage"}));
  // Without the flags, a count pp does not divide names a split that works.
  EXPECT_TRUE(testing::throws_input_error([&] { validate_plan(with_layers(126), pipeline(16, 0, 0, 16), 16); },
                                          {"--pp", "--first-stage-layers 7 --last-stage-layers 7"}));
}

TEST(UnevenStages, TheProgramRunsEveryLayerOnceOnItsStage) {
  // tiny with 10 layers on pp 3 as 2 + 6 + 2, 4 microbatches: deadlock-free, each stage's layer ops
  // name exactly its layers.
  const TransformerConfig m = with_layers(10);
  const ParallelPlan p = pipeline(3, 2, 2, 4);
  const ProgramSet set = build_program(CheckedPlan(m, p));
  ASSERT_TRUE(check_program(set).ok());
  const std::vector<std::set<int>> expected = {{0, 1}, {2, 3, 4, 5, 6, 7}, {8, 9}};
  for (int stage = 0; stage < 3; ++stage) {
    std::set<int> layers;
    for (const Op& op : set.programs.at(static_cast<std::size_t>(set.ranks[stage].program))) {
      if (op.layer >= 0) layers.insert(op.layer);
    }
    EXPECT_EQ(layers, expected[static_cast<std::size_t>(stage)]) << "stage " << stage;
  }
  // The middle stage holds 6 layers' parameters and nothing else (the embedding is stage 0's, the head the
  // last's).
  EXPECT_EQ(stage_parameters(m, p, 1), 6 * layer_parameters(m, 1).total());
  EXPECT_GT(stage_parameters(m, p, 0), 2 * layer_parameters(m, 1).total());
}

}  // namespace
}  // namespace commscale

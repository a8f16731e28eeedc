// Plan validation: every rule names the offending flag and value; pipeline schedules by hand.

#include <gtest/gtest.h>

#include <set>

#include "input_error_matcher.hpp"
#include "parallel/plan.hpp"
#include "parallel/schedule.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;

ParallelPlan plan(int dp, int tp, int pp, int global_batch) {
  ParallelPlan p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.global_batch = global_batch;
  return p;
}

TEST(PlanValidation, AcceptsAValidPlan) {
  const TransformerConfig m = find_preset("gpt3-175b", "");
  ParallelPlan p = plan(8, 8, 16, 512);
  p.sequence_parallel = true;
  EXPECT_NO_THROW(validate_plan(m, p, 1024));
  EXPECT_EQ(microbatches_per_step(p), 64);
  EXPECT_EQ(layers_per_chunk(m, p), 6);
}

TEST(PlanValidation, NamesTheOffendingValue) {
  const TransformerConfig tiny = find_preset("tiny", "");  // 8 layers, 8 heads, 4 KV heads, MLP 512, seq 64
  const auto fails = [&](ParallelPlan p, int world, std::initializer_list<std::string_view> parts) {
    return throws_input_error([&] { validate_plan(tiny, p, world); }, parts);
  };
  EXPECT_TRUE(fails(plan(2, 2, 2, 8), 16, {"--world", "dp 2 x tp 2 x pp 2 = 8 ranks, not 16"}));
  EXPECT_TRUE(fails(plan(1, 8, 1, 1), 8, {"--tp", "8 does not divide the 4 KV heads"}));
  EXPECT_TRUE(fails(plan(1, 3, 1, 1), 3, {"--tp", "3 does not divide the 8 attention heads"}));
  EXPECT_TRUE(fails(plan(1, 1, 3, 3), 3, {"--pp", "8 layers do not split into pp 3 x 1 chunks"}));
  EXPECT_TRUE(fails(plan(2, 1, 1, 5), 2, {"--global-batch", "5 is not a multiple of dp 2 x micro-batch 1"}));
  EXPECT_TRUE(fails(plan(0, 1, 1, 1), 0, {"--dp", "0 is too small"}));
  ParallelPlan p = plan(1, 1, 1, 1);
  p.sequence_parallel = true;
  EXPECT_TRUE(fails(p, 1, {"--sp", "--tp 2 or more"}));
  p = plan(1, 1, 1, 1);
  p.zero_stage = 4;
  EXPECT_TRUE(fails(p, 1, {"--zero", "stage 4", "0, 1, 2 or 3"}));
  p = plan(1, 1, 2, 3);
  p.schedule = ScheduleKind::kInterleaved;
  p.chunks = 2;
  EXPECT_TRUE(fails(p, 2, {"--global-batch", "3 microbatches per step are not a multiple of pp 2"}));
  p.global_batch = 4;
  p.chunks = 1;
  EXPECT_TRUE(fails(p, 2, {"--chunks", "2 or more with interleaved"}));
  p.chunks = 8;  // 8 layers do not fill pp 2 x 8 chunks
  EXPECT_TRUE(fails(p, 2, {"--pp", "8 layers do not split into pp 2 x 8 chunks"}));
  p = plan(1, 1, 1, 1);
  p.schedule = ScheduleKind::kInterleaved;
  p.chunks = 2;
  EXPECT_TRUE(fails(p, 1, {"--schedule", "--pp 2 or more"}));
  p = plan(1, 1, 2, 2);
  p.chunks = 2;
  EXPECT_TRUE(fails(p, 2, {"--chunks", "2 chunks per stage with 1f1b"}));
  p = plan(1, 1, 1, 1);
  p.order = "tp-dp";
  EXPECT_TRUE(fails(p, 1, {"--order", "tp-dp", "three dimensions"}));
  p.order = "tp-tp-pp";
  EXPECT_TRUE(fails(p, 1, {"--order", "names tp twice"}));
  p.order = "tp-ep-pp";
  EXPECT_TRUE(fails(p, 1, {"--order", "unknown dimension \"ep\""}));
  p = plan(1, 2, 1, 1);
  p.sequence_parallel = true;
  TransformerConfig odd = tiny;
  odd.seq = 63;
  EXPECT_TRUE(throws_input_error([&] { validate_plan(odd, p, 2); }, {"--sp", "sequence length 63"}));
  p = plan(1, 1, 1, 1);
  p.bucket_bytes = Bytes(0);
  EXPECT_TRUE(fails(p, 1, {"--bucket-mb"}));
}

TEST(Schedule, GpipeAndOneFOneBByHand) {
  using S = ScheduleStep;
  EXPECT_EQ(stage_schedule(ScheduleKind::kGpipe, 2, 0, 2, 1),
            (std::vector<S>{{true, 0, 0}, {true, 1, 0}, {false, 0, 0}, {false, 1, 0}}));
  // p = 3, m = 4: stage 0 warms up with 2 forwards, stage 2 with none.
  EXPECT_EQ(stage_schedule(ScheduleKind::k1F1B, 3, 0, 4, 1), (std::vector<S>{{true, 0, 0},
                                                                             {true, 1, 0},
                                                                             {true, 2, 0},
                                                                             {false, 0, 0},
                                                                             {true, 3, 0},
                                                                             {false, 1, 0},
                                                                             {false, 2, 0},
                                                                             {false, 3, 0}}));
  EXPECT_EQ(stage_schedule(ScheduleKind::k1F1B, 3, 2, 4, 1), (std::vector<S>{{true, 0, 0},
                                                                             {false, 0, 0},
                                                                             {true, 1, 0},
                                                                             {false, 1, 0},
                                                                             {true, 2, 0},
                                                                             {false, 2, 0},
                                                                             {true, 3, 0},
                                                                             {false, 3, 0}}));
}

TEST(Schedule, InterleavedByHand) {
  // p = 2, v = 2, m = 4, stage 1: warm-up (2 - 1 - 1) * 2 + (2 - 1) * 2 = 2 forwards. The k-th forward
  // runs chunk (k / 2) % 2 of microbatch (k / 4) * 2 + k % 2; backwards visit chunks in reverse.
  using S = ScheduleStep;
  EXPECT_EQ(stage_schedule(ScheduleKind::kInterleaved, 2, 1, 4, 2), (std::vector<S>{{true, 0, 0},
                                                                                    {true, 1, 0},
                                                                                    {true, 0, 1},
                                                                                    {false, 0, 1},
                                                                                    {true, 1, 1},
                                                                                    {false, 1, 1},
                                                                                    {true, 2, 0},
                                                                                    {false, 0, 0},
                                                                                    {true, 3, 0},
                                                                                    {false, 1, 0},
                                                                                    {true, 2, 1},
                                                                                    {false, 2, 1},
                                                                                    {true, 3, 1},
                                                                                    {false, 3, 1},
                                                                                    {false, 2, 0},
                                                                                    {false, 3, 0}}));
}

TEST(Schedule, EveryScheduleRunsEachMicrobatchAndChunkOnceBackwardAfterForward) {
  for (ScheduleKind kind : {ScheduleKind::kGpipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved}) {
    for (int p : {2, 3, 4}) {
      const int v = kind == ScheduleKind::kInterleaved ? 3 : 1;
      const int m = 2 * p;
      for (int stage = 0; stage < p; ++stage) {
        std::set<std::pair<int, int>> done_forward;
        std::set<std::pair<int, int>> done_backward;
        for (const ScheduleStep& step : stage_schedule(kind, p, stage, m, v)) {
          const std::pair<int, int> key{step.microbatch, step.chunk};
          if (step.forward) {
            EXPECT_TRUE(done_forward.insert(key).second);
          } else {
            EXPECT_TRUE(done_forward.count(key) == 1) << "backward before forward";
            EXPECT_TRUE(done_backward.insert(key).second);
          }
        }
        EXPECT_EQ(done_backward.size(), static_cast<std::size_t>(m * v));
      }
    }
  }
}

}  // namespace
}  // namespace commscale

// diff-trace's attribution columns (timeline_diff.hpp): a predicted timeline's host, peers, latency
// and interference seconds beside the durations, by hand on a two-rank step; and, where neither
// timeline has attribution, the report exactly as it was before attribution existed.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "program/timeline_diff.hpp"
#include "report/timeline_diff_report.hpp"

namespace commscale {
namespace {

// Two ranks of one tp group: L3.fwd.a (compute), L3.fwd.ar (all-reduce), L3.fwd.b (compute).
ProgramSet two_rank_program() {
  ProgramSet set;
  set.world_size = 2;
  const Gemm g = make_gemm(64, 64, 64, 1, DataType::kBFloat16);
  std::vector<Op> ops(3);
  ops[0] = Op{0, Stream::kCompute, Phase::kForward, {}, "L3.fwd.a", 0, 0, g};
  ops[1] =
      Op{1, Stream::kTp, Phase::kForward, {0}, "L3.fwd.ar", 0, 0, CollectiveOp{Collective::kAllReduce, 0, Bytes(64)}};
  ops[2] = Op{2, Stream::kCompute, Phase::kForward, {1}, "L3.fwd.b", 0, 0, g};
  set.programs.push_back(ops);
  for (int r = 0; r < 2; ++r) set.ranks.push_back(RankProgram{r, 0, {Group{GroupRole::kTp, {0, 1}}}});
  return set;
}

// Measured: rank 0 a [0,4) ar [4,7) b [7,9); rank 1 a [0,2) ar [3,7) b [7,10).
Timeline measured() {
  return {"executor",
          2,
          1,
          {{0, 0, 0, Seconds(0), Seconds(4)},
           {0, 0, 1, Seconds(4), Seconds(7)},
           {0, 0, 2, Seconds(7), Seconds(9)},
           {1, 0, 0, Seconds(0), Seconds(2)},
           {1, 0, 1, Seconds(3), Seconds(7)},
           {1, 0, 2, Seconds(7), Seconds(10)}}};
}

// Predicted: rank 0 a [0.5,4) ar [4,6) b [6,8.25); rank 1 a [0.25,2.25) ar [3,6) b [6,8). The host held a
// back 0.5 s on rank 0 and 0.25 s on rank 1; rank 1 waited 1 s for rank 0 at the all-reduce, whose
// latency term is 0.5 s; interference added 0.25 s to b on rank 0.
Timeline predicted(bool attributed) {
  Timeline t{"predictor",
             2,
             1,
             {{0, 0, 0, Seconds(0.5), Seconds(4)},
              {0, 0, 1, Seconds(4), Seconds(6)},
              {0, 0, 2, Seconds(6), Seconds(8.25)},
              {1, 0, 0, Seconds(0.25), Seconds(2.25)},
              {1, 0, 1, Seconds(3), Seconds(6)},
              {1, 0, 2, Seconds(6), Seconds(8)}}};
  if (attributed) {
    const Seconds zero(0.0);
    t.attribution = {{Seconds(0.5), zero, zero, zero},         {zero, zero, Seconds(0.5), zero},
                     {zero, zero, zero, Seconds(0.25)},        {Seconds(0.25), zero, zero, zero},
                     {zero, Seconds(1.0), Seconds(0.5), zero}, {zero, zero, zero, zero}};
  }
  return t;
}

std::string printed(const TimelineDiff& d) {
  std::ostringstream out;
  print_diff(out, d, 3);
  return out.str();
}

TEST(TimelineDiffAttribution, PredictedPartsByHand) {
  const ProgramSet set = two_rank_program();
  const TimelineDiff d = diff_timelines(set, measured(), predicted(true), "a", "b", 3);
  EXPECT_FALSE(d.a_parts.has_value());
  ASSERT_TRUE(d.b_parts.has_value());
  // Per rank and step: host (0.5 + 0.25) / 2, peers 1 / 2, latency (0.5 + 0.5) / 2, interference 0.25 / 2.
  EXPECT_DOUBLE_EQ(d.b_parts->host_s, 0.375);
  EXPECT_DOUBLE_EQ(d.b_parts->peers_s, 0.5);
  EXPECT_DOUBLE_EQ(d.b_parts->latency_s, 0.5);
  EXPECT_DOUBLE_EQ(d.b_parts->interference_s, 0.125);
  ASSERT_EQ(d.kinds.size(), 3u);
  const TimeComparison& ar = d.kinds[0];  // the largest difference, -1 s
  ASSERT_EQ(ar.key, "L*.fwd.ar");
  EXPECT_DOUBLE_EQ(ar.b_parts->peers_s, 0.5);
  EXPECT_DOUBLE_EQ(ar.b_parts->latency_s, 0.5);
  EXPECT_DOUBLE_EQ(ar.b_parts->host_s, 0.0);
  EXPECT_FALSE(ar.a_parts.has_value());
  ASSERT_EQ(d.ops[2].key, "rank 1 op 1 L3.fwd.ar");
  EXPECT_DOUBLE_EQ(d.ops[2].b_parts->peers_s, 1.0);

  const std::string text = printed(d);
  EXPECT_NE(text.find("attributed: host                              -     0.375000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("attributed: interference                      -     0.125000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("B/A - 1     B host   B peers B latency  B interf    count stream\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("A host"), std::string::npos) << text;
  EXPECT_NE(text.find("L*.fwd.ar                              3.500000     2.500000    -1.000000    -28.6%   "
                      "0.000000  0.500000  0.500000  0.000000      1.0 tp\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 1 op 1 L3.fwd.ar                                            4.000000     3.000000    "
                      "-1.000000    -25.0%   0.000000  1.000000  0.500000  0.000000\n"),
            std::string::npos)
      << text;

  const nlohmann::json j = diff_to_json(d);
  EXPECT_FALSE(j["attribution_per_rank_per_step"].contains("a"));
  EXPECT_DOUBLE_EQ(j["attribution_per_rank_per_step"]["b"]["host_s"].get<double>(), 0.375);
  EXPECT_DOUBLE_EQ(j["op_kinds"][0]["b_attribution"]["latency_s"].get<double>(), 0.5);
  EXPECT_FALSE(j["op_kinds"][0].contains("a_attribution"));
  EXPECT_DOUBLE_EQ(j["ops"][2]["b_attribution"]["peers_s"].get<double>(), 1.0);
}

TEST(TimelineDiffAttribution, BothSidesAttributedShowBothAndTheirDifference) {
  const ProgramSet set = two_rank_program();
  const TimelineDiff d = diff_timelines(set, predicted(true), predicted(true), "a", "b", 3);
  const std::string text = printed(d);
  EXPECT_NE(text.find("A host   A peers A latency  A interf     B host   B peers B latency  B interf"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("attributed: peers                      0.500000     0.500000    +0.000000     +0.0%\n"),
            std::string::npos)
      << text;
}

TEST(TimelineDiffAttribution, WithoutAttributionTheReportIsAsBefore) {
  // Printed by the report before attribution existed, for these two timelines.
  const std::string before = R"(A: executor (1 steps)   B: predictor (1 steps); differences are B - A, relative to A

per step, mean over steps and ranks
                                            A s          B s      B - A s   B/A - 1
step_time                             10.000000     8.000000    -2.000000    -20.0%
compute                                5.500000     4.875000    -0.625000    -11.4%
exposed_comm                           3.000000     2.000000    -1.000000    -33.3%
bubble                                 1.500000     1.125000    -0.375000    -25.0%
exposed tp                             3.000000     2.000000    -1.000000    -33.3%

per stream: time its ops take, per rank and step
                                            A s          B s      B - A s   B/A - 1
compute                                5.500000     4.875000    -0.625000    -11.4%
tp                                     3.500000     2.500000    -1.000000    -28.6%
dp                                     0.000000     0.000000    +0.000000     +0.0%
pp-send                                0.000000     0.000000    +0.000000     +0.0%
pp-recv                                0.000000     0.000000    +0.000000     +0.0%

per op kind, largest differences first (per rank and step)
                                            A s          B s      B - A s   B/A - 1    count stream
L*.fwd.ar                              3.500000     2.500000    -1.000000    -28.6%      1.0 tp
L*.fwd.b                               2.500000     2.125000    -0.375000    -15.0%      1.0 compute
L*.fwd.a                               3.000000     2.750000    -0.250000     -8.3%      1.0 compute

per op, largest differences first (mean over steps)
rank 1 op 2 L3.fwd.b                                             3.000000     2.000000    -1.000000    -33.3%
rank 0 op 1 L3.fwd.ar                                            3.000000     2.000000    -1.000000    -33.3%
rank 1 op 1 L3.fwd.ar                                            4.000000     3.000000    -1.000000    -25.0%
)";
  const ProgramSet set = two_rank_program();
  const TimelineDiff d = diff_timelines(set, measured(), predicted(false), "a", "b", 3);
  EXPECT_FALSE(d.a_parts.has_value());
  EXPECT_FALSE(d.b_parts.has_value());
  EXPECT_EQ(printed(d), before);
  const nlohmann::json j = diff_to_json(d);
  EXPECT_FALSE(j.contains("attribution_per_rank_per_step"));
  EXPECT_FALSE(j["op_kinds"][0].contains("b_attribution"));
}

}  // namespace
}  // namespace commscale

// Doctor's pair rounds and blame (predict/doctor_rounds.hpp), and the rules that judge a check
// (predict/doctor_check.hpp), by hand.
#include <gtest/gtest.h>

#include <set>

#include "predict/doctor_check.hpp"
#include "predict/doctor_rounds.hpp"

namespace commscale::predict {
namespace {

using Pairs = std::vector<std::pair<int, int>>;

TEST(DoctorRounds, RoundCountIsCeilLog2) {
  // ceil(log2 N): 2 -> 1, 3 and 4 -> 2, 5 to 8 -> 3, 9 -> 4, 1000 and 1024 -> 10, 1025 -> 11.
  EXPECT_EQ(pair_round_count(0), 0);
  EXPECT_EQ(pair_round_count(1), 0);
  EXPECT_EQ(pair_round_count(2), 1);
  EXPECT_EQ(pair_round_count(3), 2);
  EXPECT_EQ(pair_round_count(4), 2);
  EXPECT_EQ(pair_round_count(5), 3);
  EXPECT_EQ(pair_round_count(8), 3);
  EXPECT_EQ(pair_round_count(9), 4);
  EXPECT_EQ(pair_round_count(1000), 10);
  EXPECT_EQ(pair_round_count(1024), 10);
  EXPECT_EQ(pair_round_count(1025), 11);
}

TEST(DoctorRounds, RoundKPairsUnitsAtDistanceTwoToTheK) {
  // i pairs with i XOR 2^k: neighbours first, then the halves across the bisection.
  EXPECT_EQ(pair_round(4, 0), (Pairs{{0, 1}, {2, 3}}));
  EXPECT_EQ(pair_round(4, 1), (Pairs{{0, 2}, {1, 3}}));
  EXPECT_EQ(pair_round(8, 2), (Pairs{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // N = 5: unit 4's partners 5 and 6 do not exist, so it meets only unit 0 (round 2).
  EXPECT_EQ(pair_round(5, 0), (Pairs{{0, 1}, {2, 3}}));
  EXPECT_EQ(pair_round(5, 1), (Pairs{{0, 2}, {1, 3}}));
  EXPECT_EQ(pair_round(5, 2), (Pairs{{0, 4}}));
}

TEST(DoctorRounds, EveryUnitMeetsLog2NDistinctPartnersInDisjointRounds) {
  const int n = 64;
  std::vector<std::set<int>> partners(n);
  for (int k = 0; k < pair_round_count(n); ++k) {
    std::set<int> busy;
    for (const auto& [a, b] : pair_round(n, k)) {
      EXPECT_TRUE(busy.insert(a).second) << "unit " << a << " twice in round " << k;
      EXPECT_TRUE(busy.insert(b).second) << "unit " << b << " twice in round " << k;
      partners[a].insert(b);
      partners[b].insert(a);
    }
    EXPECT_EQ(busy.size(), 64u);  // a power of two: nobody idles
  }
  for (int u = 0; u < n; ++u) EXPECT_EQ(partners[u].size(), 6u) << "unit " << u;
}

// Four units, two rounds, both directions: (0,1) (2,3), then (0,2) (1,3); `slow` transfers run at
// 0.5 GB/s, the rest at 10.
std::vector<PairSample> four_units(const std::set<std::pair<int, int>>& slow, bool absolute) {
  std::vector<PairSample> out;
  for (int k = 0; k < 2; ++k) {
    for (const auto& [a, b] : pair_round(4, k)) {
      for (const auto& [src, dst] : Pairs{{a, b}, {b, a}}) {
        PairSample s{src, dst, k, slow.count({src, dst}) > 0 ? 0.5 : 10.0, std::nullopt};
        if (absolute) s.expected_GBps = 10.0;
        out.push_back(s);
      }
    }
  }
  return out;
}

TEST(DoctorBlame, ASlowNodeIsNamedForBothDirections) {
  // Unit 3 is slow both ways: 2->3, 3->2 (round 0), 1->3, 3->1 (round 1). Its two sends and two receives
  // are all slow (0.5 / 10 = 0.05 of expected); units 1 and 2 have one slow transfer of two each way,
  // not more than half, so they are not blamed; every slow transfer is explained by unit 3.
  for (bool absolute : {true, false}) {
    const PairJudgement j = judge_pairs(four_units({{2, 3}, {3, 2}, {1, 3}, {3, 1}}, absolute), 4, 0.85);
    ASSERT_EQ(j.blame.size(), 1u) << (absolute ? "absolute" : "peers");
    EXPECT_EQ(j.blame[0].unit, 3);
    EXPECT_EQ(j.blame[0].side, BlameSide::kBoth);
    EXPECT_EQ(j.blame[0].slow, 4);
    EXPECT_EQ(j.blame[0].of, 4);
    EXPECT_DOUBLE_EQ(j.blame[0].median_ratio, 0.05);
  }
}

TEST(DoctorBlame, ThePeerReferenceIsThe75thPercentile) {
  // 8 transfers, 4 at 0.5 and 4 at 10: nearest rank ceil(0.75 x 8) = 6 is a 10.
  const PairJudgement j = judge_pairs(four_units({{2, 3}, {3, 2}, {1, 3}, {3, 1}}, false), 4, 0.85);
  ASSERT_TRUE(j.peer_reference_GBps);
  EXPECT_DOUBLE_EQ(*j.peer_reference_GBps, 10.0);
}

TEST(DoctorBlame, AReceivePathAlone) {
  // Only what unit 2 receives is slow: 3->2 (round 0) and 0->2 (round 1).
  const PairJudgement j = judge_pairs(four_units({{3, 2}, {0, 2}}, true), 4, 0.85);
  ASSERT_EQ(j.blame.size(), 1u);
  EXPECT_EQ(j.blame[0].unit, 2);
  EXPECT_EQ(j.blame[0].side, BlameSide::kReceive);
  EXPECT_EQ(j.blame[0].of, 2);
}

TEST(DoctorBlame, ASlowPathBetweenHealthyUnits) {
  // 0->1 alone is slow: 0 sent to 2 at speed, 1 received from 3 at speed, so it is the path.
  const PairJudgement j = judge_pairs(four_units({{0, 1}}, true), 4, 0.85);
  ASSERT_EQ(j.blame.size(), 1u);
  EXPECT_EQ(j.blame[0].side, BlameSide::kPath);
  EXPECT_EQ(j.blame[0].unit, 0);
  EXPECT_EQ(j.blame[0].partner, 1);
  EXPECT_FALSE(j.blame[0].ambiguous());
}

TEST(DoctorBlame, TwoUnitsCannotTellTheirEndsApart) {
  const std::vector<PairSample> two = {{0, 1, 0, 10.0, 10.0}, {1, 0, 0, 0.5, 10.0}};
  const PairJudgement j = judge_pairs(two, 2, 0.85);
  ASSERT_EQ(j.blame.size(), 1u);
  EXPECT_EQ(j.blame[0].side, BlameSide::kPath);
  EXPECT_TRUE(j.blame[0].sender_alone);
  EXPECT_TRUE(j.blame[0].receiver_alone);
  EXPECT_EQ(j.slow, (std::vector<bool>{false, true}));
}

TEST(DoctorBlame, AUnitThatMetOnePartnerIsNotVouchedFor) {
  // Five units: unit 4 meets only unit 0 (round 2: 4 XOR 1 = 5 and 4 XOR 2 = 6 do not exist). Unit 4 is
  // slow both ways: 0->4 and 4->0 are slow, the 8 other transfers run at speed. Unit 0 sent to 1, 2
  // and 4 (one slow of three) and received from them likewise: not blamed. Unit 4 has one transfer
  // each way, too few to blame it, so each slow transfer names the pair, and says that nothing
  // vouches for unit 4's end: 0->4 has receiver_alone, 4->0 has sender_alone, unit 0 is vouched for.
  std::vector<PairSample> five;
  for (int k = 0; k < pair_round_count(5); ++k) {
    for (const auto& [a, b] : pair_round(5, k)) {
      for (const auto& [src, dst] : Pairs{{a, b}, {b, a}}) {
        five.push_back({src, dst, k, b == 4 ? 0.5 : 10.0, 10.0});
      }
    }
  }
  ASSERT_EQ(five.size(), 2u * (2 + 2 + 1));
  const PairJudgement j = judge_pairs(five, 5, 0.85);
  ASSERT_EQ(j.blame.size(), 2u);
  for (const UnitBlame& b : j.blame) EXPECT_EQ(b.side, BlameSide::kPath);
  EXPECT_EQ(j.blame[0].unit, 0);
  EXPECT_EQ(j.blame[0].partner, 4);
  EXPECT_FALSE(j.blame[0].sender_alone);
  EXPECT_TRUE(j.blame[0].receiver_alone);
  EXPECT_EQ(j.blame[1].unit, 4);
  EXPECT_TRUE(j.blame[1].sender_alone);
  EXPECT_FALSE(j.blame[1].receiver_alone);
}

TEST(DoctorBlame, AHealthyJobBlamesNobody) {
  const PairJudgement j = judge_pairs(four_units({}, false), 4, 0.85);
  EXPECT_TRUE(j.blame.empty());
  for (bool s : j.slow) EXPECT_FALSE(s);
}

TEST(DoctorCheck, JudgedByRatioAgainstTheThreshold) {
  DoctorCheck c;
  c.measured = 90.0;
  c.expected = 100.0;
  const DoctorCheck passed = judge(c, 0.85);  // 0.90 >= 0.85
  EXPECT_EQ(passed.status, CheckStatus::kPass);
  EXPECT_DOUBLE_EQ(*passed.ratio(), 0.9);
  EXPECT_DOUBLE_EQ(passed.threshold, 0.85);
  c.measured = 80.0;  // 0.80 < 0.85
  EXPECT_EQ(judge(c, 0.85).status, CheckStatus::kFail);
  c.expected.reset();
  const DoctorCheck unjudged = judge(c, 0.85);
  EXPECT_EQ(unjudged.status, CheckStatus::kInfo);
  EXPECT_EQ(unjudged.detail, "not judged: no expectation");
  EXPECT_EQ(tally({passed, judge(c, 0.85), not_run("gpu", "gemm", "x", "no GPU")}).failed, 0);
}

TEST(DoctorCheck, AFailedCheckNamesItsSuspect) {
  DoctorCheck c;
  c.phase = "gpu";
  c.check = "gemm";
  c.subject = "n1 rank 3 GPU 3 [0000:4e:00.0]";
  c.place.host = "n1";
  c.place.rank = 3;
  c.place.gpu = 3;
  c.measured = 400.0;
  c.expected = 791.6;
  c.unit = "TFLOP/s";
  c = judge(c, 0.85);
  const std::vector<Suspect> s = suspects_of({c});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, "gpu");
  EXPECT_EQ(s[0].name, c.subject);
  EXPECT_EQ(s[0].evidence, "gemm: 400 TFLOP/s against 791.6 expected (0.505 of it), threshold 0.85");
  EXPECT_FALSE(tally({c}).ok());
}

}  // namespace
}  // namespace commscale::predict

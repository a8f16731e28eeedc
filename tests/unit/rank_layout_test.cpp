// Rank layout against a brute-force oracle: 162 configurations (tp, dp, pp in {1,2,4} x {1,2,3} x
// {1,2,4}, every one of the 6 orders), plus golden layouts written out by hand, and the expert layout of plans
// with context parallelism against Megatron-Core's RankGenerator.

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>
#include <vector>

#include "input_error_matcher.hpp"
#include "parallel/rank_layout.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;

// The oracle numbers ranks by nested loops, the first dimension of the order innermost, and finds
// groups by scanning every rank for equal coordinates on the other two dimensions.
struct Oracle {
  std::vector<RankCoords> coords;

  Oracle(const std::array<int, 3>& sizes, const std::array<ParallelDim, 3>& order) {
    const auto size = [&](ParallelDim d) { return sizes[static_cast<std::size_t>(d)]; };
    for (int c2 = 0; c2 < size(order[2]); ++c2) {
      for (int c1 = 0; c1 < size(order[1]); ++c1) {
        for (int c0 = 0; c0 < size(order[0]); ++c0) {
          std::array<int, 3> c{};
          c[static_cast<std::size_t>(order[0])] = c0;
          c[static_cast<std::size_t>(order[1])] = c1;
          c[static_cast<std::size_t>(order[2])] = c2;
          coords.push_back({c[0], c[1], c[2]});
        }
      }
    }
  }

  [[nodiscard]] std::vector<int> group(int rank, ParallelDim dim) const {
    std::map<int, int> by_coordinate;
    for (int q = 0; q < static_cast<int>(coords.size()); ++q) {
      bool same = true;
      for (ParallelDim other : {ParallelDim::kTp, ParallelDim::kDp, ParallelDim::kPp}) {
        if (other != dim &&
            coords[static_cast<std::size_t>(q)].get(other) != coords[static_cast<std::size_t>(rank)].get(other)) {
          same = false;
        }
      }
      if (same) by_coordinate[coords[static_cast<std::size_t>(q)].get(dim)] = q;
    }
    std::vector<int> members;
    for (const auto& [coordinate, q] : by_coordinate) members.push_back(q);
    return members;
  }
};

TEST(RankLayout, MatchesBruteForceOracle) {
  const std::vector<std::array<ParallelDim, 3>> orders = {
      {ParallelDim::kTp, ParallelDim::kDp, ParallelDim::kPp}, {ParallelDim::kTp, ParallelDim::kPp, ParallelDim::kDp},
      {ParallelDim::kDp, ParallelDim::kTp, ParallelDim::kPp}, {ParallelDim::kDp, ParallelDim::kPp, ParallelDim::kTp},
      {ParallelDim::kPp, ParallelDim::kTp, ParallelDim::kDp}, {ParallelDim::kPp, ParallelDim::kDp, ParallelDim::kTp}};
  int configurations = 0;
  for (int tp : {1, 2, 4}) {
    for (int dp : {1, 2, 3}) {
      for (int pp : {1, 2, 4}) {
        for (const auto& order : orders) {
          const std::string text =
              std::string(name(order[0])) + "-" + std::string(name(order[1])) + "-" + std::string(name(order[2]));
          const RankLayout layout(tp, dp, pp, text);
          const Oracle oracle({tp, dp, pp}, order);
          ASSERT_EQ(layout.world_size(), tp * dp * pp);
          for (int rank = 0; rank < layout.world_size(); ++rank) {
            const RankCoords expected = oracle.coords[static_cast<std::size_t>(rank)];
            ASSERT_EQ(layout.coords(rank), expected) << text << " rank " << rank;
            ASSERT_EQ(layout.rank(expected), rank) << text;
            for (ParallelDim dim : {ParallelDim::kTp, ParallelDim::kDp, ParallelDim::kPp}) {
              ASSERT_EQ(layout.group(rank, dim), oracle.group(rank, dim))
                  << text << " rank " << rank << " " << name(dim);
            }
          }
          ++configurations;
        }
      }
    }
  }
  EXPECT_EQ(configurations, 162);
}

TEST(RankLayout, GoldenLayoutsByHand) {
  // tp 2, dp 2, pp 2 with tp-dp-pp: rank = tp + 2 dp + 4 pp; the tp pairs are neighbours.
  const RankLayout a(2, 2, 2, "tp-dp-pp");
  EXPECT_EQ(a.group(5, ParallelDim::kTp), (std::vector<int>{4, 5}));
  EXPECT_EQ(a.group(5, ParallelDim::kDp), (std::vector<int>{5, 7}));
  EXPECT_EQ(a.group(5, ParallelDim::kPp), (std::vector<int>{1, 5}));
  // tp-pp-dp: rank = tp + 2 pp + 4 dp; a pipeline is ranks {0, 2} and {1, 3} within the first four.
  const RankLayout b(2, 2, 2, "tp-pp-dp");
  EXPECT_EQ(b.group(0, ParallelDim::kPp), (std::vector<int>{0, 2}));
  EXPECT_EQ(b.group(0, ParallelDim::kDp), (std::vector<int>{0, 4}));
  EXPECT_EQ(b.coords(6), (RankCoords{0, 1, 1}));
  // GPT-3 175B on 1024 ranks: rank 1000 = tp 0 + 8 (dp 5) + 64 (pp 15).
  const RankLayout c(8, 8, 16, "tp-dp-pp");
  EXPECT_EQ(c.coords(1000), (RankCoords{0, 5, 15}));
  EXPECT_EQ(c.group(1000, ParallelDim::kPp).front(), 40);
}

// Every group of the expert layout along `dim`, each once, in the order of its first member.
std::vector<std::vector<int>> all_groups(const ExpertLayout& l, int world, ExpertDim dim) {
  std::vector<std::vector<int>> out;
  std::vector<bool> seen(static_cast<std::size_t>(world), false);
  for (int r = 0; r < world; ++r) {
    if (seen[static_cast<std::size_t>(r)]) continue;
    out.push_back(l.group(r, dim));
    for (int member : out.back()) seen[static_cast<std::size_t>(member)] = true;
  }
  return out;
}

// With context parallelism Megatron-Core builds its expert RankGenerator with cp 1 and dp = world / (etp x ep x pp)
// (parallel_state.py, expert_decoder_rank_generator; order "tp-cp-ep-dp-pp"): the stage's tp x cp x dp ranks are
// regrouped as etp x ep x edp, edp = tp x cp x dp / (etp x ep), fastest first. The groups below are its
// get_ranks("tp"), ("ep") and ("dp") on the expert generator; by hand: rank = etp + etp (ep + ep (edp + edp pp)).
TEST(RankLayout, ExpertLayoutFoldsContextParallelismAsMegatronCore) {
  using Groups = std::vector<std::vector<int>>;
  // tp 1, cp 2, dp 4, ep 8: edp = 1 x 2 x 4 / 8 = 1; one ep group of all 8 ranks (the dense cp groups are {0, 1},
  // {2, 3}, ...: an ep group spans cp and dp ranks alike).
  const ExpertLayout a(1, 4, 1, 8, "tp-dp-pp", 1, 2);
  EXPECT_EQ(a.size(ExpertDim::kEdp), 1);
  EXPECT_EQ(all_groups(a, 8, ExpertDim::kEp), (Groups{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(all_groups(a, 8, ExpertDim::kEdp), (Groups{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
  // tp 2, cp 2, dp 2, ep 4, etp 1: edp = 8 / 4 = 2; ep = rank % 4, edp = rank / 4.
  const ExpertLayout b(2, 2, 1, 4, "tp-dp-pp", 1, 2);
  EXPECT_EQ(b.size(ExpertDim::kEdp), 2);
  EXPECT_EQ(all_groups(b, 8, ExpertDim::kEtp), (Groups{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
  EXPECT_EQ(all_groups(b, 8, ExpertDim::kEp), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(all_groups(b, 8, ExpertDim::kEdp), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // The same with "tp-cp-dp-pp", cp named where the default places it: the same layout.
  const ExpertLayout named(2, 2, 1, 4, "tp-cp-dp-pp", 1, 2);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(named.group(r, ExpertDim::kEp), b.group(r, ExpertDim::kEp));
  // tp 2, cp 2, dp 2, ep 2, etp 2: edp 2; etp = rank % 2, ep = rank / 2 % 2, edp = rank / 4.
  const ExpertLayout c(2, 2, 1, 2, "tp-dp-pp", 2, 2);
  EXPECT_EQ(all_groups(c, 8, ExpertDim::kEtp), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(all_groups(c, 8, ExpertDim::kEp), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(all_groups(c, 8, ExpertDim::kEdp), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // tp 2, cp 2, dp 2, pp 2, ep 4: 8 ranks a stage, the experts' stages those of the dense layout (pp group {r, r+8}).
  const ExpertLayout d(2, 2, 2, 4, "tp-dp-pp", 1, 2);
  EXPECT_EQ(all_groups(d, 16, ExpertDim::kEp), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}));
  EXPECT_EQ(all_groups(d, 16, ExpertDim::kEdp),
            (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}}));
  // tp 1, cp 2, dp 2, ep 2 (the CLI test's 4 ranks): the ep groups {0, 1}, {2, 3} are the cp groups.
  const ExpertLayout e(1, 2, 1, 2, "tp-dp-pp", 1, 2);
  EXPECT_EQ(all_groups(e, 4, ExpertDim::kEp), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(all_groups(e, 4, ExpertDim::kEdp), (Groups{{0, 2}, {1, 3}}));
  // ep divides tp x cp x dp, not tp x dp alone: ep 8 over tp 1, cp 2, dp 4 (above) but not ep 3, nor etp 2 x ep 8.
  EXPECT_TRUE(throws_input_error([] { (void)ExpertLayout(1, 4, 1, 3, "tp-dp-pp", 1, 2); },
                                 {"--ep", "3 does not divide tp 1 x cp 2 x dp 4"}));
  EXPECT_TRUE(throws_input_error([] { (void)ExpertLayout(1, 4, 1, 8, "tp-dp-pp", 2, 2); },
                                 {"--etp", "2 x ep 8 does not divide tp 1 x cp 2 x dp 4"}));
}

}  // namespace
}  // namespace commscale

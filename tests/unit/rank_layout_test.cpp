// Rank layout against a brute-force oracle: 162 configurations (tp, dp, pp in {1,2,4} x {1,2,3} x
// {1,2,4}, every one of the 6 orders), plus golden layouts written out by hand.

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>
#include <vector>

#include "parallel/rank_layout.hpp"

namespace commscale {
namespace {

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

}  // namespace
}  // namespace commscale

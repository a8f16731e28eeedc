#include "core/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace commscale {
namespace {

TEST(Stats, EmptyIsAllZero) {
  const Summary s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.mean, 0.0);
}

TEST(Stats, OddCountByHand) {
  // Samples 1..5 in any order: mean 3, median 3, population variance (4+1+0+1+4)/5 = 2.
  const std::vector<double> samples = {5, 1, 4, 2, 3};
  const Summary s = summarize(samples);
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 5.0);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(2.0) / 3.0);
  // Nearest rank: ceil(0.99 * 5) = 5, the largest sample.
  EXPECT_EQ(s.p99, 5.0);
}

TEST(Stats, EvenCountMedianIsMeanOfMiddlePair) {
  const std::vector<double> samples = {10, 2, 8, 4};
  EXPECT_DOUBLE_EQ(summarize(samples).median, 6.0);  // (4 + 8) / 2
}

TEST(Stats, P99NearestRankOnHundredSamples) {
  // 1..100: ceil(0.99 * 100) = 99, so p99 is the 99th smallest = 99; with 200 samples rank 198.
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);
  EXPECT_EQ(summarize(samples).p99, 99.0);
  for (int i = 101; i <= 200; ++i) samples.push_back(i);
  EXPECT_EQ(summarize(samples).p99, 198.0);
}

TEST(Stats, PercentileEdges) {
  const std::vector<double> sorted = {1, 2, 3};
  EXPECT_EQ(percentile_nearest_rank(sorted, 100.0), 3.0);
  EXPECT_EQ(percentile_nearest_rank(sorted, 1.0), 1.0);     // ceil(0.03) = 1
  EXPECT_EQ(percentile_nearest_rank(sorted, 50.0), 2.0);    // ceil(1.5) = 2
  EXPECT_EQ(percentile_nearest_rank(sorted, 66.7), 3.0);    // ceil(2.001) = 3
}

TEST(Stats, ConstantSamplesHaveNoSpread) {
  const std::vector<double> samples(7, 12.5);
  const Summary s = summarize(samples);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.cv, 0.0);
  EXPECT_EQ(s.median, 12.5);
}

}  // namespace
}  // namespace commscale

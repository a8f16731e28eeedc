#pragma once

// Summary statistics over timing samples. Every sample is kept by the caller; this only describes them.

#include <cstddef>
#include <span>

#include <nlohmann/json_fwd.hpp>

namespace commscale {

struct Summary {
  std::size_t count = 0;
  double min = 0.0;
  double max = 0.0;
  double mean = 0.0;
  double median = 0.0;  // middle sample, or the mean of the two middle samples for an even count
  double p99 = 0.0;     // nearest rank: the smallest sample with at least 99% of samples at or below it
  double stddev = 0.0;  // population standard deviation
  double cv = 0.0;      // coefficient of variation, stddev / mean (0 when the mean is 0)
};

// Nearest-rank percentile of sorted samples, p in (0, 100]: the sample at rank ceil(p/100 * n).
[[nodiscard]] double percentile_nearest_rank(std::span<const double> sorted, double p);

// Summarizes samples in any order. An empty span gives an all-zero summary.
[[nodiscard]] Summary summarize(std::span<const double> samples);

// The JSON form reporters use for a summary of samples in microseconds:
// {"min_us", "median_us", "mean_us", "p99_us", "max_us", "stddev_us", "cv"}.
[[nodiscard]] nlohmann::json summary_us_json(const Summary& summary);

}  // namespace commscale

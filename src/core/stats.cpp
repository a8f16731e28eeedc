#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <nlohmann/json.hpp>

namespace commscale {

double percentile_nearest_rank(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0.0;
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();

  s.count = n;
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  s.median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
  s.p99 = percentile_nearest_rank(sorted, 99.0);
  double squares = 0.0;
  for (double x : sorted) squares += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(squares / static_cast<double>(n));
  s.cv = s.mean != 0.0 ? s.stddev / s.mean : 0.0;
  return s;
}

nlohmann::json summary_us_json(const Summary& t) {
  return {{"min_us", t.min}, {"median_us", t.median}, {"mean_us", t.mean}, {"p99_us", t.p99},
          {"max_us", t.max}, {"stddev_us", t.stddev}, {"cv", t.cv}};
}

}  // namespace commscale

#include "predict/clock.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace commscale::predict {

double ClockModel::speedup(double gemm_share) const noexcept {
  const std::vector<ClockPoint>& p = curve_.points;
  if (p.empty()) return 1.0;
  if (gemm_share <= p.front().gemm_share) return p.front().speedup;
  if (gemm_share >= p.back().gemm_share) return p.back().speedup;
  const auto hi = std::upper_bound(p.begin(), p.end(), gemm_share,
                                   [](double s, const ClockPoint& q) { return s < q.gemm_share; });
  const auto lo = hi - 1;
  const double t = (gemm_share - lo->gemm_share) / (hi->gemm_share - lo->gemm_share);
  return lo->speedup + t * (hi->speedup - lo->speedup);
}

double ClockModel::max_speedup() const noexcept {
  double most = 1.0;
  for (const ClockPoint& p : curve_.points) most = std::max(most, p.speedup);
  return most;
}

ClockModel clock_for(const hw::GpuSpec& gpu, const CalibrationProfile* profile, std::string* note) {
  if (profile == nullptr || profile->clock.points.empty()) return {};
  if (profile->gpu.name != gpu.name) {
    if (note != nullptr) {
      *note = fmt::format("the clock curve measured on {} not used for {}: the power limit and clocks are that "
                          "GPU's own",
                          profile->gpu.name, gpu.name);
    }
    return {};
  }
  return ClockModel(profile->clock);
}

std::unique_ptr<OpCosts> apply_clock(const ProgramSet& set, const OpCosts& costs, const InterferenceCosts& shares,
                                     const ClockModel& model, const SimulationOptions& options, Simulation& sim,
                                     ClockResult* result, int max_iterations) {
  ClockResult r;
  const std::size_t ranks = sim.simulated.size();
  if (model.empty() || ranks == 0) {
    if (result != nullptr) *result = r;
    return nullptr;
  }
  // Base durations and GEMM shares by simulated rank and op; each rank's GEMM time at the rows' rates.
  const OpShares table = op_shares(set, sim, costs, shares);
  const std::vector<std::vector<double>>& base = table.seconds;
  const std::vector<std::vector<double>>& share = table.gemm_share;
  std::vector<double> gemm_s(ranks, 0.0);
  for (std::size_t i = 0; i < ranks; ++i) {
    for (std::size_t op = 0; op < base[i].size(); ++op) {
      if (share[i][op] > 0) gemm_s[i] += base[i][op] * share[i][op];
    }
  }
  std::unique_ptr<OpCosts> clocked;
  std::vector<double> speedup(ranks, 1.0);
  const auto settle = [&] {
    r.gemm_share = 0.0;
    r.speedup = 0.0;
    bool moved = false;
    const double step = sim.step_time.value();
    for (std::size_t i = 0; i < ranks; ++i) {
      const double s = step > 0 ? gemm_s[i] / speedup[i] / step : 0.0;
      const double u = model.speedup(s);
      moved = moved || std::abs(u - speedup[i]) > 1e-3 * speedup[i];
      speedup[i] = u;
      r.gemm_share += s / static_cast<double>(ranks);
      r.speedup += u / static_cast<double>(ranks);
    }
    return moved;
  };
  for (int iteration = 0; iteration < max_iterations && settle(); ++iteration) {
    std::vector<std::vector<double>> seconds = base;
    for (std::size_t i = 0; i < ranks; ++i) {
      for (std::size_t op = 0; op < seconds[i].size(); ++op) {
        const double g = share[i][op];
        if (g > 0) seconds[i][op] *= 1.0 - g + g / speedup[i];
      }
    }
    clocked = std::make_unique<TabledCosts>(sim.stand_in, std::move(seconds));
    simulate(set, *clocked, options, sim);
    ++r.iterations;
  }
  if (result != nullptr) *result = r;
  return clocked;
}

}  // namespace commscale::predict

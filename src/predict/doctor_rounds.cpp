#include "predict/doctor_rounds.hpp"

#include <algorithm>

#include "core/stats.hpp"

namespace commscale::predict {
namespace {

constexpr double kPeerPercentile = 75.0;

// The transfers of one side of one unit: indices into the samples.
struct Side {
  std::vector<std::size_t> samples;
  [[nodiscard]] int slow(const std::vector<bool>& is_slow) const {
    return static_cast<int>(std::count_if(samples.begin(), samples.end(), [&](std::size_t i) { return is_slow[i]; }));
  }
};

// Blamed: at least two partners, and more than half of them slow.
bool blamed(const Side& side, const std::vector<bool>& is_slow) {
  const int slow = side.slow(is_slow);
  return side.samples.size() >= 2 && slow >= 2 && 2 * static_cast<std::size_t>(slow) > side.samples.size();
}

double median_ratio(const std::vector<std::size_t>& indices, const std::vector<PairSample>& samples,
                    const PairJudgement& j) {
  std::vector<double> ratios;
  for (std::size_t i : indices) {
    if (j.slow[i] && j.expected_GBps[i] > 0.0) ratios.push_back(samples[i].bw_GBps / j.expected_GBps[i]);
  }
  return ratios.empty() ? 0.0 : summarize(ratios).median;
}

}  // namespace

int pair_round_count(int units) {
  int rounds = 0;
  while (units > 1 && (1 << rounds) < units) ++rounds;
  return rounds;
}

std::vector<std::pair<int, int>> pair_round(int units, int round) {
  std::vector<std::pair<int, int>> pairs;
  const int distance = 1 << round;
  for (int i = 0; i < units; ++i) {
    const int partner = i ^ distance;
    if (partner > i && partner < units) pairs.emplace_back(i, partner);
  }
  return pairs;
}

PairJudgement judge_pairs(const std::vector<PairSample>& samples, int units, double min_ratio) {
  PairJudgement j;
  if (samples.size() >= 4) {
    std::vector<double> bw;
    for (const PairSample& s : samples) bw.push_back(s.bw_GBps);
    std::sort(bw.begin(), bw.end());
    j.peer_reference_GBps = percentile_nearest_rank(bw, kPeerPercentile);
  }
  std::vector<Side> sends(static_cast<std::size_t>(units));
  std::vector<Side> receives(static_cast<std::size_t>(units));
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const PairSample& s = samples[i];
    const double expected = s.expected_GBps.value_or(j.peer_reference_GBps.value_or(0.0));
    j.expected_GBps.push_back(expected);
    j.slow.push_back(expected > 0.0 && s.bw_GBps < min_ratio * expected);
    sends.at(static_cast<std::size_t>(s.src)).samples.push_back(i);
    receives.at(static_cast<std::size_t>(s.dst)).samples.push_back(i);
  }
  std::vector<bool> send_blamed(static_cast<std::size_t>(units));
  std::vector<bool> receive_blamed(static_cast<std::size_t>(units));
  for (std::size_t u = 0; u < sends.size(); ++u) {
    send_blamed[u] = blamed(sends[u], j.slow);
    receive_blamed[u] = blamed(receives[u], j.slow);
    if (!send_blamed[u] && !receive_blamed[u]) continue;
    UnitBlame b;
    b.unit = static_cast<int>(u);
    b.side = send_blamed[u] && receive_blamed[u] ? BlameSide::kBoth
             : send_blamed[u]                    ? BlameSide::kSend
                                                 : BlameSide::kReceive;
    std::vector<std::size_t> behind;
    if (send_blamed[u]) behind = sends[u].samples;
    if (receive_blamed[u]) behind.insert(behind.end(), receives[u].samples.begin(), receives[u].samples.end());
    b.of = static_cast<int>(behind.size());
    b.slow = static_cast<int>(std::count_if(behind.begin(), behind.end(), [&](std::size_t i) { return j.slow[i]; }));
    b.median_ratio = median_ratio(behind, samples, j);
    j.blame.push_back(b);
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const PairSample& s = samples[i];
    const auto src = static_cast<std::size_t>(s.src);
    const auto dst = static_cast<std::size_t>(s.dst);
    if (!j.slow[i] || send_blamed[src] || receive_blamed[dst]) continue;
    UnitBlame b;
    b.side = BlameSide::kPath;
    b.unit = s.src;
    b.partner = s.dst;
    b.slow = 1;
    b.of = 1;
    b.median_ratio = median_ratio({i}, samples, j);
    b.sender_alone = sends[src].samples.size() < 2;
    b.receiver_alone = receives[dst].samples.size() < 2;
    j.blame.push_back(b);
  }
  return j;
}

}  // namespace commscale::predict

#include "core/routing.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/pattern.hpp"

namespace commscale {
namespace {

constexpr const char* kKeys =
    "experts=E,top-k=K with optional imbalance=F (>= 1) or gini=G (0 to 1), groups=N,group-top-k=M, tokens=T, "
    "seed=S";

template <class T>
T parse_value(std::string_view key, std::string_view value, std::string_view where) {
  T out{};
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size()) {
    throw InputError(where, fmt::format("{}={} is not a number", key, value), kKeys);
  }
  return out;
}

void check_spec(const RoutingSpec& s, std::string_view where) {
  const auto fail = [&](const std::string& problem, const std::string& expected) {
    throw InputError(where, problem, expected);
  };
  if (s.experts < 0 || s.top_k < 0) fail(fmt::format("experts={},top-k={}", s.experts, s.top_k), "each at least 1");
  if (s.experts < 1 || s.top_k < 1) fail("experts and top-k are required", kKeys);
  if (s.top_k > s.experts) fail(fmt::format("top-k={} of {} experts", s.top_k, s.experts), "top-k <= experts");
  if (s.imbalance && s.gini) fail("both imbalance and gini", "one skew: imbalance=F or gini=G");
  if (s.imbalance && !(*s.imbalance >= 1.0)) fail(fmt::format("imbalance={}", *s.imbalance), "imbalance >= 1");
  if (s.gini && !(*s.gini >= 0.0 && *s.gini < 1.0)) fail(fmt::format("gini={}", *s.gini), "0 <= gini < 1");
  if (s.tokens < 1 || s.tokens > (std::int64_t{1} << 20)) fail(fmt::format("tokens={}", s.tokens), "1 to 1048576");
  // Negative groups were read as none, with no word.
  if (s.groups < 0 || s.group_top_k < 0) {
    fail(fmt::format("groups={},group-top-k={}", s.groups, s.group_top_k), "each at least 1, or both left out");
  }
  if ((s.groups > 0) != (s.group_top_k > 0)) fail("groups without group-top-k, or the reverse", "both, or neither");
  if (s.groups > 0) {
    if (s.experts % s.groups != 0)
      fail(fmt::format("{} experts in {} groups", s.experts, s.groups), "groups | experts");
    if (s.group_top_k > s.groups) fail(fmt::format("group-top-k={} of {} groups", s.group_top_k, s.groups), "M <= N");
    if (s.top_k % s.group_top_k != 0 || s.group_top_k * (s.experts / s.groups) < s.top_k) {
      fail(fmt::format("top-k={} from {} groups of {} experts", s.top_k, s.group_top_k, s.experts / s.groups),
           "group-top-k dividing top-k, and the chosen groups holding top-k experts or more");
    }
  }
}

// Uniform in (0, 1) from a hash of (seed, a, b): portable, unlike the standard distributions.
double uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  const std::uint64_t h = pattern_hash(pattern_hash(seed * 0x9E3779B97F4A7C15ull + a) ^ (b * 0xD1B54A32D192ED03ull));
  return (static_cast<double>(h >> 11) + 0.5) / 9007199254740992.0;  // 2^53
}

// The sampled routing at one skew: each token's experts, as per-expert and per-(rank, rank) counts.
class Router {
 public:
  Router(const RoutingSpec& s, int ranks) : s_(s), ranks_(ranks), per_rank_(s.experts / ranks) {
    const auto e = static_cast<std::size_t>(s.experts);
    popularity_.resize(e);
    for (std::size_t i = 0; i < e; ++i) {  // Box-Muller
      const double u1 = uniform(s.seed, 1, 2 * i);
      const double u2 = uniform(s.seed, 1, 2 * i + 1);
      popularity_[i] = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
    const std::size_t tokens = static_cast<std::size_t>(s.tokens) * static_cast<std::size_t>(ranks);
    gumbel_.resize(tokens * e);
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t i = 0; i < e; ++i) {
        gumbel_[t * e + i] = static_cast<float>(-std::log(-std::log(uniform(s.seed, 2 + t, i))));
      }
    }
  }

  // Rows received by each expert at skew `skew`; with `matrix`, the rank-to-rank rows too.
  std::vector<double> route(double skew, TrafficMatrix* matrix) const {
    const auto e = static_cast<std::size_t>(s_.experts);
    std::vector<double> load(e, 0.0);
    std::vector<double> score(e);
    std::vector<int> order(e);
    const std::size_t tokens = gumbel_.size() / e;
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t i = 0; i < e; ++i) score[i] = skew * popularity_[i] + gumbel_[t * e + i];
      if (s_.groups > 0) mask_groups(score);
      std::iota(order.begin(), order.end(), 0);
      std::nth_element(order.begin(), order.begin() + (s_.top_k - 1), order.end(), [&](int a, int b) {
        return score[static_cast<std::size_t>(a)] > score[static_cast<std::size_t>(b)];
      });
      const int source = static_cast<int>(t / static_cast<std::size_t>(s_.tokens));
      for (int k = 0; k < s_.top_k; ++k) {
        const int expert = order[static_cast<std::size_t>(k)];
        load[static_cast<std::size_t>(expert)] += 1.0;
        if (matrix != nullptr) {
          matrix->cells[static_cast<std::size_t>(source) * static_cast<std::size_t>(ranks_) +
                        static_cast<std::size_t>(expert / per_rank_)] += 1.0;
        }
      }
    }
    return load;
  }

  [[nodiscard]] double rank_imbalance(const std::vector<double>& load) const {
    std::vector<double> rank(static_cast<std::size_t>(ranks_), 0.0);
    for (std::size_t i = 0; i < load.size(); ++i) rank[i / static_cast<std::size_t>(per_rank_)] += load[i];
    const double mean = std::accumulate(rank.begin(), rank.end(), 0.0) / ranks_;
    return *std::max_element(rank.begin(), rank.end()) / mean;
  }

 private:
  // Megatron-Core's group_limited_topk: the groups ranked by the sum of their best K/M scores; the
  // experts of all but the best M groups leave the race.
  void mask_groups(std::vector<double>& score) const {
    const auto size = static_cast<std::size_t>(s_.experts / s_.groups);
    const auto best = static_cast<std::size_t>(s_.top_k / s_.group_top_k);
    std::vector<double> group_score(static_cast<std::size_t>(s_.groups));
    std::vector<double> members(size);
    for (std::size_t g = 0; g < group_score.size(); ++g) {
      std::copy_n(score.begin() + static_cast<std::ptrdiff_t>(g * size), size, members.begin());
      std::partial_sort(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(best), members.end(),
                        std::greater<>());
      group_score[g] = std::accumulate(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(best), 0.0);
    }
    std::vector<double> sorted = group_score;
    std::nth_element(sorted.begin(), sorted.begin() + (s_.group_top_k - 1), sorted.end(), std::greater<>());
    const double cut = sorted[static_cast<std::size_t>(s_.group_top_k - 1)];
    int kept = 0;
    for (std::size_t g = 0; g < group_score.size(); ++g) {
      const bool keep = group_score[g] > cut || (group_score[g] == cut && kept < s_.group_top_k);
      if (keep) {
        ++kept;
        continue;
      }
      for (std::size_t i = g * size; i < (g + 1) * size; ++i) score[i] = -1e300;
    }
  }

  const RoutingSpec& s_;
  int ranks_;
  int per_rank_;
  std::vector<double> popularity_;
  std::vector<float> gumbel_;  // tokens x experts (float: the table is the generator's memory)
};

}  // namespace

RoutingSpec parse_routing(std::string_view text, std::string_view where) {
  RoutingSpec s;
  std::set<std::string_view> seen;  // a key given twice was read as its last value, silently
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    start = comma + 1;
    // An empty item was skipped, as if a value had been lost on the way (as --devices refuses one).
    if (item.empty()) {
      throw InputError(where, fmt::format("\"{}\" has an empty item", text), "a comma-separated list of key=value");
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) throw InputError(where, fmt::format("\"{}\" is not key=value", item), kKeys);
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    if (!seen.insert(key == "topk" ? "top-k" : key).second) {
      throw InputError(where, fmt::format("{} is given twice", key), "each key once");
    }
    if (key == "experts") {
      s.experts = parse_value<int>(key, value, where);
    } else if (key == "top-k" || key == "topk") {
      s.top_k = parse_value<int>(key, value, where);
    } else if (key == "imbalance") {
      s.imbalance = parse_value<double>(key, value, where);
    } else if (key == "gini") {
      s.gini = parse_value<double>(key, value, where);
    } else if (key == "groups") {
      s.groups = parse_value<int>(key, value, where);
    } else if (key == "group-top-k") {
      s.group_top_k = parse_value<int>(key, value, where);
    } else if (key == "tokens") {
      s.tokens = parse_value<std::int64_t>(key, value, where);
    } else if (key == "seed") {
      s.seed = parse_value<std::uint64_t>(key, value, where);
    } else {
      throw InputError(where, fmt::format("unknown key \"{}\"", key), kKeys);
    }
  }
  check_spec(s, where);
  return s;
}

std::string routing_text(const RoutingSpec& s) {
  std::string out = fmt::format("experts={},top-k={}", s.experts, s.top_k);
  if (s.imbalance) out += fmt::format(",imbalance={:g}", *s.imbalance);
  if (s.gini) out += fmt::format(",gini={:g}", *s.gini);
  if (s.groups > 0) out += fmt::format(",groups={},group-top-k={}", s.groups, s.group_top_k);
  return out + fmt::format(",tokens={},seed={}", s.tokens, s.seed);
}

double gini_coefficient(std::vector<double> values) {
  const auto n = static_cast<double>(values.size());
  const double sum = std::accumulate(values.begin(), values.end(), 0.0);
  if (values.empty() || sum <= 0) return 0.0;
  std::sort(values.begin(), values.end());
  double weighted = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) weighted += static_cast<double>(i + 1) * values[i];
  return 2.0 * weighted / (n * sum) - (n + 1.0) / n;
}

RoutedTraffic route_tokens(const RoutingSpec& spec, int ranks, std::string_view where) {
  if (ranks < 1 || spec.experts % ranks != 0) {
    throw InputError(where, fmt::format("{} experts over {} ranks", spec.experts, ranks),
                     "a number of experts that the ranks divide (each rank holds experts / ranks)");
  }
  const std::uint64_t cells = static_cast<std::uint64_t>(spec.tokens) * static_cast<std::uint64_t>(ranks) *
                              static_cast<std::uint64_t>(spec.experts);
  if (cells > kMaxRoutingCells) {
    throw InputError(
        where, fmt::format("tokens={} x {} ranks x {} experts = {} scores", spec.tokens, ranks, spec.experts, cells),
        fmt::format("at most {} (fewer tokens=: the sample's rows are scaled to the real ones)", kMaxRoutingCells));
  }
  const Router router(spec, ranks);
  const auto metric = [&](double skew) {
    const std::vector<double> load = router.route(skew, nullptr);
    return spec.gini ? gini_coefficient(load) : router.rank_imbalance(load);
  };
  double skew = 0.0;
  if (spec.imbalance || spec.gini) {
    const double target = spec.gini ? *spec.gini : *spec.imbalance;
    double lo = 0.0;
    double hi = 1.0;
    double at_hi = metric(hi);
    while (at_hi < target) {
      lo = hi;
      hi *= 2.0;
      if (hi > 256.0) {
        throw InputError(
            where,
            fmt::format("{} = {} cannot be reached ({:.3f} at most)", spec.gini ? "gini" : "imbalance", target, at_hi),
            "a smaller skew, or more experts per rank");
      }
      at_hi = metric(hi);
    }
    double at_lo = metric(lo);
    for (int i = 0; i < 30; ++i) {
      const double mid = 0.5 * (lo + hi);
      const double at_mid = metric(mid);
      (at_mid < target ? lo : hi) = mid;
      (at_mid < target ? at_lo : at_hi) = at_mid;
    }
    skew = at_lo >= target || target - at_lo < at_hi - target ? lo : hi;
  }
  RoutedTraffic out;
  out.rows.ranks = ranks;
  out.rows.cells.assign(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks), 0.0);
  out.rows.source = "routing " + routing_text(spec);
  const std::vector<double> load = router.route(skew, &out.rows);
  out.skew = skew;
  out.imbalance = router.rank_imbalance(load);
  out.gini = gini_coefficient(load);
  return out;
}

TrafficMatrix alltoallv_traffic(const std::optional<TrafficMatrix>& matrix, const std::optional<RoutingSpec>& routing,
                                int ranks) {
  if (matrix) {
    check_matrix_ranks(*matrix, ranks, "--matrix");
    return *matrix;
  }
  if (!routing) return uniform_traffic(ranks);
  const RoutedTraffic routed = route_tokens(*routing, ranks, "--routing");
  TrafficMatrix m = routed.rows;
  m.source += fmt::format(" (reached: busiest rank {:.3f}x the mean, gini {:.3f})", routed.imbalance, routed.gini);
  return m;
}

}  // namespace commscale

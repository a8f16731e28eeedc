#pragma once

// A mixture-of-experts router's traffic, generated: `--routing experts=E,top-k=K[,imbalance=F | gini=G]
// [,groups=N,group-top-k=M][,tokens=T][,seed=S]` (bench alltoallv, predict --collective alltoallv, and the
// MoE layers of predict/plan/train). Every rank routes T tokens to K distinct experts each; the experts are
// spread evenly over the ranks, rank r holding experts [r E/n, (r+1) E/n) as Megatron-Core places local
// experts. Row i of the result is the rows (token copies) rank i sends each rank, as Megatron-Core's
// alltoall dispatcher sends them: one copy per (token, expert), so every row sums to exactly T x K.
//
// The skew: each expert has a seeded popularity z_e (a standard normal); a token's scores are s z_e plus
// seeded Gumbel noise, and it takes its K best (sampling K experts without replacement from a softmax of
// s z_e). s = 0 is a balanced router; s is found by bisection so that the sampled routing reaches the
// target: `imbalance` = the busiest rank's received rows over the mean (what `--load-imbalance` means),
// `gini` = the Gini coefficient of the experts' received rows. Group-limited routing (Megatron-Core's
// --moe-router-num-groups/--moe-router-group-topk, DeepSeek's n_group/topk_group) first picks M of the N
// expert groups by the sum of each group's best K/M scores, then the K experts within them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/traffic_matrix.hpp"

namespace commscale {

struct RoutingSpec {
  int experts = 0;
  int top_k = 0;
  std::optional<double> imbalance;  // target busiest-rank received rows / mean, >= 1
  std::optional<double> gini;       // target Gini coefficient of the experts' rows, in [0, 1)
  int groups = 0;                   // group-limited routing: expert groups (0: none)
  int group_top_k = 0;              // groups each token may use
  std::int64_t tokens = 1024;       // tokens each rank routes (the sample; callers scale the rows)
  std::uint64_t seed = 1;
};

// Parses the comma list above. Throws InputError naming `where` for an unknown key, a bad value, both
// imbalance and gini, or group keys that do not fit the experts and top-k.
[[nodiscard]] RoutingSpec parse_routing(std::string_view text, std::string_view where);
// The canonical text of a spec (the key=value list parse_routing reads), for reports and JSON.
[[nodiscard]] std::string routing_text(const RoutingSpec& spec);

// The most scores (tokens x ranks x experts) one generation samples: 128 MiB of noise, seconds of work.
inline constexpr std::uint64_t kMaxRoutingCells = std::uint64_t{1} << 25;

struct RoutedTraffic {
  TrafficMatrix rows;      // rows[i][j]: token copies rank i sends rank j (self included)
  double skew = 0.0;       // the s the bisection chose
  double imbalance = 1.0;  // reached: busiest rank's received rows / mean
  double gini = 0.0;       // reached: Gini coefficient of the experts' received rows
};

// Routes spec.tokens tokens on each of `ranks` ranks. Throws InputError naming `where` when the experts
// do not spread evenly over the ranks, or the target cannot be reached (the largest reachable is named).
[[nodiscard]] RoutedTraffic route_tokens(const RoutingSpec& spec, int ranks, std::string_view where);

// alltoallv's traffic over `ranks` (bench's and predict's --matrix and --routing): the file's matrix, checked
// against the ranks; else the routing's, its source naming the imbalance and Gini coefficient it reached; else
// uniform. Throws InputError naming --matrix or --routing.
[[nodiscard]] TrafficMatrix alltoallv_traffic(const std::optional<TrafficMatrix>& matrix,
                                              const std::optional<RoutingSpec>& routing, int ranks);

// The Gini coefficient of non-negative values: 0 when equal, (n-1)/n when one holds everything.
[[nodiscard]] double gini_coefficient(std::vector<double> values);

}  // namespace commscale

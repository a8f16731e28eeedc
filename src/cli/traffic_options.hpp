#pragma once

// alltoallv's traffic flags, shared by `bench alltoallv` and `predict --collective alltoallv`: --matrix FILE
// (core/traffic_matrix.hpp) or --routing SPEC (core/routing.hpp), either only with alltoallv among the
// collectives.

#include <optional>
#include <string>
#include <vector>

#include "core/collective.hpp"
#include "core/routing.hpp"
#include "core/traffic_matrix.hpp"

namespace commscale {

struct TrafficFlags {
  std::optional<TrafficMatrix> matrix;
  std::optional<RoutingSpec> routing;
};

// Reads the matrix file or parses the routing (empty strings: not given). Throws InputError naming the flag
// when both are given, or when alltoallv is not in `collectives` (`usage` shows how to ask for it).
[[nodiscard]] TrafficFlags parse_traffic_flags(const std::string& matrix, const std::string& routing,
                                               const std::vector<Collective>& collectives, const std::string& usage);

}  // namespace commscale

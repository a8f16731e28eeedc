#include "cli/traffic_options.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace commscale {

TrafficFlags parse_traffic_flags(const std::string& matrix, const std::string& routing,
                                 const std::vector<Collective>& collectives, const std::string& usage) {
  TrafficFlags out;
  if (matrix.empty() && routing.empty()) return out;
  const std::string flag = matrix.empty() ? "--routing" : "--matrix";
  if (!matrix.empty() && !routing.empty()) {
    throw InputError("--matrix", "given with --routing", "one of --matrix FILE and --routing SPEC");
  }
  if (std::find(collectives.begin(), collectives.end(), Collective::kAllToAllV) == collectives.end()) {
    throw InputError(flag, "sets alltoallv's traffic, and alltoallv is not among the collectives",
                     usage + " " + flag + " ...");
  }
  if (!matrix.empty()) out.matrix = read_traffic_matrix(matrix, "--matrix");
  if (!routing.empty()) out.routing = parse_routing(routing, "--routing");
  return out;
}

}  // namespace commscale

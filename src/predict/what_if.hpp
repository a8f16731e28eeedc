#pragma once

// What-if overrides (hw/overrides.hpp) that cannot change a prediction: a --set or --sweep of the
// network's keys (network.*) where every rank of the prediction is on one node, so that no traffic
// crosses the network. The commands print each as a warning naming the override and why, rather than
// rows or figures that look like an answer.

#include <string>
#include <vector>

#include "hw/overrides.hpp"

namespace commscale::predict {

// Whether `key` (after shorthands) names a figure of the network between nodes.
[[nodiscard]] bool network_key(const std::string& key);

// One warning per override that cannot change a prediction of `what` ("this prediction", a compare
// label) on `nodes` nodes of `cluster`.
[[nodiscard]] std::vector<std::string> unused_override_warnings(const std::vector<hw::Override>& overrides,
                                                                const std::string& what, const std::string& cluster,
                                                                int nodes);

}  // namespace commscale::predict

#pragma once

// Two timelines compared, as JSON and as the text `commscale diff-trace` prints.

#include <cstddef>
#include <ostream>

#include <nlohmann/json.hpp>

#include "program/timeline_diff.hpp"

namespace commscale {

[[nodiscard]] nlohmann::json diff_to_json(const TimelineDiff& d);
void print_diff(std::ostream& out, const TimelineDiff& d, std::size_t top);

}  // namespace commscale

#pragma once

// Bounded float fields of input files. JSON has no NaN or infinity, but 1e300 is a number, and it
// overflows what it is multiplied into (seconds, bytes) or cast to: every float field that is a
// time, a size or a bandwidth is read through a bound like this one.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hw/json_reader.hpp"

namespace commscale::hw {

// A number more than 0 and at most `max`; InputError naming `where` otherwise.
[[nodiscard]] double expect_positive(const nlohmann::json& value, const std::string& where, double max);
// The same for a key of `object` that must be present (marked read).
[[nodiscard]] double positive_number(JsonObject& object, std::string_view key, double max);

}  // namespace commscale::hw

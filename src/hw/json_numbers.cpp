#include "hw/json_numbers.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale::hw {

double expect_positive(const nlohmann::json& value, const std::string& where, double max) {
  const double x = expect_number(value, where);
  if (!(x > 0 && x <= max))
    throw InputError(where, fmt::format("is {}", x), fmt::format("more than 0, at most {}", max));
  return x;
}

double positive_number(JsonObject& object, std::string_view key, double max) {
  return expect_positive(object.required(key), object.where(key), max);
}

}  // namespace commscale::hw

#pragma once

// Typed reads of one key of a model document (commscale's model JSON, a Hugging Face config.json),
// each error naming "origin: key" and what was expected.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "workload/transformer.hpp"

namespace commscale {

// A whole number that fits T; get<T>() alone would wrap (4294967298 layers read as 2).
template <class T>
[[nodiscard]] T read_whole_number(const nlohmann::json& doc, std::string_view origin, std::string_view key) {
  const nlohmann::json& value = doc.at(std::string(key));
  if (!value.is_number_integer()) {
    throw InputError(field_where(origin, key), fmt::format("{} is not a whole number", json_excerpt(value)),
                     "an integer");
  }
  const bool fits = value.is_number_unsigned()
                        ? value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                        : value.get<std::int64_t>() >= std::numeric_limits<T>::min() &&
                              value.get<std::int64_t>() <= std::numeric_limits<T>::max();
  if (!fits) {
    throw InputError(field_where(origin, key), fmt::format("{} is too large", json_excerpt(value)),
                     fmt::format("a whole number of at most {}", std::numeric_limits<T>::max()));
  }
  return value.get<T>();
}

// A string, its control characters escaped (names are printed to terminals).
[[nodiscard]] std::string read_string_field(const nlohmann::json& doc, std::string_view origin, std::string_view key);
[[nodiscard]] bool read_bool_field(const nlohmann::json& doc, std::string_view origin, std::string_view key);
// A finite number (integer or not).
[[nodiscard]] double read_number_field(const nlohmann::json& doc, std::string_view origin, std::string_view key);

}  // namespace commscale

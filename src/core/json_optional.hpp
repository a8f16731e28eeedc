#pragma once

// Optional values in result files and in what ranks send to rank 0: null when absent. nlohmann 3.11
// has no std::optional conversion of its own.

#include <optional>

#include <nlohmann/json.hpp>

namespace commscale {

template <class T>
[[nodiscard]] nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// Reads in[key] into `out`: reset when the key is missing or null.
template <class T>
void read_optional(const nlohmann::json& in, const char* key, std::optional<T>& out) {
  const auto it = in.find(key);
  if (it == in.end() || it->is_null()) {
    out.reset();
  } else {
    out = it->get<T>();
  }
}

}  // namespace commscale

#pragma once

// A JSON value with its place, for error messages: "file: results[3].out_of_place.busbw_GBps". The
// readers of result files (each result type's from_json beside its to_json) take one, so a missing or
// wrong-typed key is an InputError naming the file and the key.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace commscale {

class JsonAt {
 public:
  JsonAt(const nlohmann::json& value, std::string where) : value_(&value), where_(std::move(where)) {}

  [[nodiscard]] const nlohmann::json& value() const noexcept { return *value_; }
  [[nodiscard]] const std::string& where() const noexcept { return where_; }
  [[nodiscard]] bool has(std::string_view key) const;  // present and not null

  [[nodiscard]] JsonAt at(std::string_view key) const;  // must be present
  [[nodiscard]] JsonAt at(std::size_t index) const;
  [[nodiscard]] std::optional<JsonAt> nullable(std::string_view key) const;  // must be present; null: none
  [[nodiscard]] double number(std::string_view key) const;
  [[nodiscard]] std::optional<double> optional_number(std::string_view key) const;  // absent or null: none
  [[nodiscard]] double number_or(std::string_view key, double fallback) const;     // absent or null: fallback
  [[nodiscard]] bool flag(std::string_view key) const;                    // must be true or false
  [[nodiscard]] bool flag_or(std::string_view key, bool fallback) const;  // absent or null: fallback
  [[nodiscard]] std::string string(std::string_view key) const;
  [[nodiscard]] std::string as_string() const;  // this value, which must be a string
  [[nodiscard]] std::string string_or(std::string_view key, std::string fallback) const;
  [[nodiscard]] std::vector<JsonAt> array(std::string_view key) const;  // must be an array
  [[nodiscard]] std::size_t size() const { return value_->size(); }

 private:
  const nlohmann::json* value_;
  std::string where_;
};

}  // namespace commscale

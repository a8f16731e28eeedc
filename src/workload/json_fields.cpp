#include "workload/json_fields.hpp"

namespace commscale {

std::string read_string_field(const nlohmann::json& doc, std::string_view origin, std::string_view key) {
  const nlohmann::json& value = doc.at(std::string(key));
  if (!value.is_string()) {
    throw InputError(field_where(origin, key), fmt::format("{} is not a string", json_excerpt(value)));
  }
  return printable(value.get<std::string>());
}

bool read_bool_field(const nlohmann::json& doc, std::string_view origin, std::string_view key) {
  const nlohmann::json& value = doc.at(std::string(key));
  if (!value.is_boolean()) {
    throw InputError(field_where(origin, key), fmt::format("{} is not a boolean", json_excerpt(value)),
                     "true or false");
  }
  return value.get<bool>();
}

double read_number_field(const nlohmann::json& doc, std::string_view origin, std::string_view key) {
  const nlohmann::json& value = doc.at(std::string(key));
  if (!value.is_number()) {
    throw InputError(field_where(origin, key), fmt::format("{} is not a number", json_excerpt(value)), "a number");
  }
  return value.get<double>();
}

}  // namespace commscale

#include "core/json_at.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/printable.hpp"

namespace commscale {
namespace {

std::string type_name(const nlohmann::json& v) { return v.type_name(); }

}  // namespace

bool JsonAt::has(std::string_view key) const {
  if (!value_->is_object()) return false;
  const auto it = value_->find(key);
  return it != value_->end() && !it->is_null();
}

JsonAt JsonAt::at(std::string_view key) const {
  if (!value_->is_object()) throw InputError(where_, fmt::format("is a JSON {}", type_name(*value_)), "an object");
  const auto it = value_->find(key);
  const std::string place =
      where_.ends_with(": ") ? fmt::format("{}{}", where_, key) : fmt::format("{}.{}", where_, key);
  if (it == value_->end()) throw InputError(place, "is missing", "the key, as commscale writes it");
  return JsonAt(*it, place);
}

std::optional<JsonAt> JsonAt::nullable(std::string_view key) const {
  JsonAt v = at(key);
  if (v.value().is_null()) return std::nullopt;
  return v;
}

JsonAt JsonAt::at(std::size_t index) const { return JsonAt(value_->at(index), fmt::format("{}[{}]", where_, index)); }

double JsonAt::number(std::string_view key) const {
  const JsonAt v = at(key);
  if (!v.value().is_number())
    throw InputError(v.where(), fmt::format("is a JSON {}", type_name(v.value())), "a number");
  return v.value().get<double>();
}

std::optional<double> JsonAt::optional_number(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return number(key);
}

double JsonAt::number_or(std::string_view key, double fallback) const { return optional_number(key).value_or(fallback); }

bool JsonAt::flag(std::string_view key) const {
  const JsonAt v = at(key);
  if (!v.value().is_boolean())
    throw InputError(v.where(), fmt::format("is a JSON {}", type_name(v.value())), "true or false");
  return v.value().get<bool>();
}

bool JsonAt::flag_or(std::string_view key, bool fallback) const { return has(key) ? flag(key) : fallback; }

std::string JsonAt::string(std::string_view key) const { return at(key).as_string(); }

std::string JsonAt::as_string() const {
  if (!value_->is_string()) throw InputError(where_, fmt::format("is a JSON {}", type_name(*value_)), "a string");
  return printable(value_->get<std::string>());  // names in result files reach the terminal too
}

std::string JsonAt::string_or(std::string_view key, std::string fallback) const {
  return has(key) ? string(key) : std::move(fallback);
}

std::vector<JsonAt> JsonAt::array(std::string_view key) const {
  const JsonAt v = at(key);
  if (!v.value().is_array()) throw InputError(v.where(), fmt::format("is a JSON {}", type_name(v.value())), "an array");
  std::vector<JsonAt> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(v.at(i));
  return out;
}

}  // namespace commscale

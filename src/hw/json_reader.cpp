#include "hw/json_reader.hpp"

#include <set>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/printable.hpp"

namespace commscale::hw {
namespace {

std::string type_name(const nlohmann::json& value) { return value.is_null() ? "null" : value.type_name(); }

// Two checks nlohmann does not make, run as a SAX pass over `text` before any value is built. A key
// twice in one object: JSON allows it and nlohmann keeps the last, but in our files it is a mistake
// (two "links" arrays). Nesting deeper than kMaxJsonDepth: every later step (reading, printing,
// freeing) walks a value recursively, and 100,000 levels in a 200 KB file overflow the stack; the SAX
// pass needs no stack for it. (A parse callback would do both in one pass, but nlohmann's callback
// parser scans the enclosing array at the end of every object: quadratic, 39 s for 400,000 events.)
class StrictChecks {
 public:
  using Json = nlohmann::json;
  explicit StrictChecks(const std::string& file) : file_(file) {}

  bool null() { return true; }
  bool boolean(bool /*value*/) { return true; }
  bool number_integer(Json::number_integer_t /*value*/) { return true; }
  bool number_unsigned(Json::number_unsigned_t /*value*/) { return true; }
  bool number_float(Json::number_float_t /*value*/, const Json::string_t& /*text*/) { return true; }
  bool string(Json::string_t& /*value*/) { return true; }
  bool binary(Json::binary_t& /*value*/) { return true; }
  bool start_object(std::size_t /*elements*/) {
    open();
    open_objects_.emplace_back();
    return true;
  }
  bool key(Json::string_t& key) {
    if (!open_objects_.back().insert(key).second) {
      throw InputError(file_, fmt::format("has the key \"{}\" twice in one object", excerpt(key)), "each key once");
    }
    return true;
  }
  bool end_object() {
    open_objects_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t /*elements*/) {
    open();
    return true;
  }
  bool end_array() {
    --depth_;
    return true;
  }
  // parse_error and out_of_range (a number like 1e999) alike: rethrown for the caller's message.
  [[noreturn]] bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                                const nlohmann::detail::exception& error) {
    throw error;
  }

 private:
  void open() {
    if (depth_ >= kMaxJsonDepth) {
      throw InputError(file_, fmt::format("nests arrays and objects more than {} levels deep", kMaxJsonDepth),
                       fmt::format("at most {} levels", kMaxJsonDepth));
    }
    ++depth_;
  }

  const std::string& file_;
  int depth_ = 0;  // arrays and objects open around the next value
  std::vector<std::set<std::string>> open_objects_;
};

template <class Json>
Json parse_strictly(std::string_view text, const std::string& file) {
  try {
    StrictChecks checks(file);
    (void)nlohmann::json::sax_parse(text, &checks);
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    throw InputError(file, fmt::format("is not valid JSON ({})", excerpt(e.what(), 200)), "a JSON object");
  }
}

}  // namespace

nlohmann::json read_json_file(const std::filesystem::path& file) {
  return parse_json_text(read_input_file(file), file.string());
}

nlohmann::ordered_json read_ordered_json_file(const std::filesystem::path& file) {
  return parse_ordered_json_text(read_input_file(file), file.string());
}

nlohmann::json parse_json_text(std::string_view text, const std::string& file) {
  return parse_strictly<nlohmann::json>(text, file);
}

nlohmann::ordered_json parse_ordered_json_text(std::string_view text, const std::string& file) {
  return parse_strictly<nlohmann::ordered_json>(text, file);
}

JsonObject::JsonObject(const nlohmann::json& value, std::string file, std::string path)
    : value_(&value), file_(std::move(file)), path_(std::move(path)) {
  if (!value.is_object()) throw InputError(where(), fmt::format("is a {}", type_name(value)), "a JSON object");
}

std::string JsonObject::path_of(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  if (key.empty()) return path_;
  return fmt::format("{}.{}", path_, key);
}

std::string JsonObject::where(std::string_view key) const {
  const std::string path = path_of(key);
  return path.empty() ? file_ : fmt::format("{}: {}", file_, path);
}

std::string JsonObject::where() const { return where(""); }

bool JsonObject::has(std::string_view key) const { return value_->contains(std::string(key)); }

const nlohmann::json& JsonObject::required(std::string_view key) {
  const auto it = value_->find(std::string(key));
  if (it == value_->end())
    throw InputError(where(key), "is missing", "this required key; topologies/README.md lists them");
  read_.emplace(key);
  return *it;
}

const nlohmann::json* JsonObject::optional(std::string_view key) {
  const auto it = value_->find(std::string(key));
  if (it == value_->end()) return nullptr;
  read_.emplace(key);
  return &*it;
}

std::string JsonObject::string(std::string_view key) { return expect_string(required(key), where(key)); }
double JsonObject::number(std::string_view key) { return expect_number(required(key), where(key)); }
int JsonObject::integer(std::string_view key, int min, int max) {
  return expect_integer(required(key), where(key), min, max);
}
bool JsonObject::boolean(std::string_view key) { return expect_boolean(required(key), where(key)); }

JsonObject JsonObject::object(std::string_view key) { return JsonObject(required(key), file_, path_of(key)); }

std::vector<std::string> JsonObject::strings(std::string_view key) {
  const nlohmann::json& array = required(key);
  if (!array.is_array()) throw InputError(where(key), fmt::format("is a {}", type_name(array)), "an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < array.size(); ++i) {
    out.push_back(expect_string(array[i], fmt::format("{}[{}]", where(key), i)));
  }
  return out;
}

std::vector<JsonObject> JsonObject::objects(std::string_view key) {
  const nlohmann::json& array = required(key);
  if (!array.is_array()) throw InputError(where(key), fmt::format("is a {}", type_name(array)), "an array of objects");
  std::vector<JsonObject> out;
  for (std::size_t i = 0; i < array.size(); ++i)
    out.emplace_back(array[i], file_, fmt::format("{}[{}]", path_of(key), i));
  return out;
}

void JsonObject::finish() const {
  for (const auto& item : value_->items()) {
    if (!read_.contains(item.key())) {
      throw InputError(where(excerpt(item.key())), "is not a known key", "only the keys documented in topologies/README.md");
    }
  }
}

std::string expect_string(const nlohmann::json& value, const std::string& where) {
  if (!value.is_string()) throw InputError(where, fmt::format("is a {}", type_name(value)), "a string");
  return printable(value.get<std::string>());
}

double expect_number(const nlohmann::json& value, const std::string& where) {
  if (!value.is_number()) throw InputError(where, fmt::format("is a {}", type_name(value)), "a number");
  return value.get<double>();
}

int expect_integer(const nlohmann::json& value, const std::string& where, int min, int max) {
  if (!value.is_number_integer()) throw InputError(where, fmt::format("is {}", json_excerpt(value)), "a whole number");
  const auto n = value.get<long long>();
  if (n < min || n > max) throw InputError(where, fmt::format("is {}", n), fmt::format("{} to {}", min, max));
  return static_cast<int>(n);
}

bool expect_boolean(const nlohmann::json& value, const std::string& where) {
  if (!value.is_boolean()) throw InputError(where, fmt::format("is {}", json_excerpt(value)), "true or false");
  return value.get<bool>();
}

}  // namespace commscale::hw

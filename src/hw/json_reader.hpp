#pragma once

// Reading topology files strictly: every key is either read or rejected, and every error names the
// file and the key path (`topologies/gpus/a100.json: nvlink.links`) with what was expected. The
// reader never asserts: all it can do with bad input is throw InputError.

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace commscale::hw {

// Arrays and objects nest at most this deep in any file commscale reads (ours nest 5 levels at most).
inline constexpr int kMaxJsonDepth = 64;

// Reads (core/input_file.hpp: a regular file or a pipe, read once, at most 256 MiB) and parses a JSON
// file. Throws InputError naming the file when it cannot be read or is not JSON.
[[nodiscard]] nlohmann::json read_json_file(const std::filesystem::path& file);
// The same, keeping the order of keys (for files that are rewritten, as a calibration profile is).
[[nodiscard]] nlohmann::ordered_json read_ordered_json_file(const std::filesystem::path& file);
// Parses `text` as the content of `file` (named in messages), as read_json_file does: a key twice in
// one object, nesting deeper than kMaxJsonDepth, text that is not JSON and numbers out of range all
// throw InputError.
[[nodiscard]] nlohmann::json parse_json_text(std::string_view text, const std::string& file);
[[nodiscard]] nlohmann::ordered_json parse_ordered_json_text(std::string_view text, const std::string& file);

// One JSON object of a file, with its place in the file. The JSON value must outlive the reader.
class JsonObject {
 public:
  // Throws InputError when `value` is not an object.
  JsonObject(const nlohmann::json& value, std::string file, std::string path);

  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  // "file: path.key" — the place of `key` in this object (or of the object itself).
  [[nodiscard]] std::string where(std::string_view key) const;
  [[nodiscard]] std::string where() const;
  [[nodiscard]] std::string path_of(std::string_view key) const;

  [[nodiscard]] bool has(std::string_view key) const;
  // The value of a key that must be present; marks it read.
  [[nodiscard]] const nlohmann::json& required(std::string_view key);
  // The value of a key that may be absent (nullptr then); marks it read.
  [[nodiscard]] const nlohmann::json* optional(std::string_view key);

  [[nodiscard]] std::string string(std::string_view key);
  [[nodiscard]] double number(std::string_view key);
  [[nodiscard]] int integer(std::string_view key, int min, int max);
  [[nodiscard]] bool boolean(std::string_view key);
  [[nodiscard]] JsonObject object(std::string_view key);
  [[nodiscard]] std::vector<std::string> strings(std::string_view key);  // an array of strings
  [[nodiscard]] std::vector<JsonObject> objects(std::string_view key);   // an array of objects

  // Throws InputError naming the first key (alphabetically) that nobody read.
  void finish() const;

 private:
  const nlohmann::json* value_;
  std::string file_;
  std::string path_;
  std::set<std::string, std::less<>> read_;
};

// Checks the type of a value found at `where`; throws InputError otherwise. Strings come back with their
// control characters escaped (core/printable.hpp): names from files are printed to terminals.
[[nodiscard]] std::string expect_string(const nlohmann::json& value, const std::string& where);
[[nodiscard]] double expect_number(const nlohmann::json& value, const std::string& where);
[[nodiscard]] int expect_integer(const nlohmann::json& value, const std::string& where, int min, int max);
[[nodiscard]] bool expect_boolean(const nlohmann::json& value, const std::string& where);

}  // namespace commscale::hw

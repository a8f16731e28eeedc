#include "cli/option_rules.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/output_check.hpp"

namespace commscale {
namespace {

// Tags are validators that change nothing: CLI11 keeps them with the option and finds them by name.
constexpr const char* kOutputTag = "commscale: output file";
constexpr const char* kInputTag = "commscale: input file";

CLI::Option* tag(CLI::Option* option, const char* name) {
  option->check(CLI::Validator([](std::string&) { return std::string(); }, "", name));
  return option;
}

bool has_tag(CLI::Option* option, const char* name) {
  try {
    (void)option->get_validator(name);
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

// How messages name an option: "-J/--output_file", "--tp", or a positional argument as "RESULTS".
std::string flag_name(const CLI::Option& option) {
  std::string name;
  for (const std::string& s : option.get_snames()) name += "-" + s + "/";
  if (!option.get_lnames().empty()) return name + "--" + option.get_lnames().front();
  if (!name.empty()) return name.substr(0, name.size() - 1);
  name = option.get_name(true);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  return name;
}

bool integer_option(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  return type.starts_with("INT") || type.starts_with("UINT");
}

// A whole number as decimal digits: leading zeros dropped ("010" -> "10", "-007" -> "-7"), a C prefix
// of another base refused. Anything else is left as it is, for CLI11 to convert or refuse.
std::string decimal(const std::string& text, const std::string& flag) {
  std::size_t digits = text.find_first_not_of(" \t");
  if (digits == std::string::npos) return text;
  if (text[digits] == '+' || text[digits] == '-') ++digits;
  if (digits + 1 >= text.size() || text[digits] != '0') return text;
  if (std::string_view("xXbBoO").find(text[digits + 1]) != std::string_view::npos) {
    throw InputError(flag, fmt::format("\"{}\" is not a decimal number", text), "a whole number in decimal digits");
  }
  const bool all_digits = std::all_of(text.begin() + static_cast<std::ptrdiff_t>(digits), text.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
  if (!all_digits) return text;
  const std::size_t first = std::min(text.find_first_not_of('0', digits), text.size() - 1);
  return text.substr(0, digits) + text.substr(first);
}

void add_value_rules(CLI::Option* option) {
  if (option->get_type_size_max() == 0) return;  // a switch: it takes no value
  const std::string flag = flag_name(*option);
  const bool output = has_tag(option, kOutputTag);
  const bool integer = integer_option(*option);
  option->transform(CLI::Validator(
      [flag, output, integer](std::string& text) {
        if (text.empty()) {
          if (output) throw InputError(flag, "the file name is empty", "a path to write");
          throw InputError(flag, "the value is empty", "a value, or the flag left out");
        }
        if (integer) text = decimal(text, flag);
        return std::string();
      },
      "", "commscale: value rules"));
}

void apply_to_command(CLI::App& command) {
  for (CLI::Option* option : command.get_options()) add_value_rules(option);
  for (CLI::App* sub : command.get_subcommands([](CLI::App*) { return true; })) apply_to_command(*sub);
}

void check_command(CLI::App& command) {
  std::vector<NamedOutput> outputs;
  std::vector<std::pair<std::string, std::string>> inputs;  // flag, path
  for (CLI::Option* option : command.get_options()) {
    if (option->count() == 0) continue;
    const bool output = has_tag(option, kOutputTag);
    if (!output && !has_tag(option, kInputTag)) continue;
    for (const std::string& value : option->results()) {
      if (output) {
        outputs.push_back({flag_name(*option), value});
      } else {
        inputs.emplace_back(flag_name(*option), value);
      }
    }
  }
  for (const NamedOutput& out : outputs) {
    for (const auto& [flag, path] : inputs) check_not_input(out, flag, path);
  }
  for (CLI::App* sub : command.get_subcommands()) check_command(*sub);
}

}  // namespace

CLI::Option* mark_output_file(CLI::Option* option) { return tag(option, kOutputTag); }

CLI::Option* mark_input_file(CLI::Option* option) { return tag(option, kInputTag); }

void apply_option_rules(CLI::App& app) { apply_to_command(app); }

void check_outputs_are_not_inputs(const CLI::App& app) {
  for (CLI::App* command : app.get_subcommands()) check_command(*command);
}

}  // namespace commscale

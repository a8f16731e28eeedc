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

void check_outputs_are_not_inputs(const CLI::App& app) {
  for (CLI::App* command : app.get_subcommands()) check_command(*command);
}

}  // namespace commscale

#include "cli/number_options.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

// "-T,--timeout" -> "-T/--timeout", as messages name flags.
std::string flag_name(const std::string& names) {
  std::string out = names;
  for (char& c : out) {
    if (c == ',') c = '/';
  }
  return out;
}

}  // namespace

std::optional<double> real_within(std::string_view text, const RealRange& range) {
  if (text.size() > 1 && text.front() == '+') text.remove_prefix(1);  // from_chars takes no sign but '-'
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  const bool in_range = ec == std::errc() && stop == end && std::isfinite(value) &&
                        (range.above_min ? value > range.min : value >= range.min) && value <= range.max;
  return in_range ? std::optional<double>(value) : std::nullopt;
}

double parse_real(std::string_view text, std::string_view where, const RealRange& range) {
  const std::optional<double> value = real_within(text, range);
  if (!value) throw InputError(where, fmt::format("{}{}", text, range.unit), range.expected);
  return *value;
}

CLI::Option* add_real_option(CLI::App& command, const std::string& names, double* target,
                             const std::string& description, RealRange range) {
  CLI::Option* option = command.add_option(names, *target, description);
  option->check(CLI::Validator(
      [where = flag_name(names), range = std::move(range)](std::string& text) {
        (void)parse_real(text, where, range);
        return std::string();
      },
      "", "finite"));
  return option;
}

void check_nodes_option(const CLI::Option* option, int nodes) {
  const bool given = option != nullptr && option->count() > 0;
  if (nodes < 0 || (given && nodes == 0)) {
    throw InputError("--nodes", fmt::format("{}", nodes), "a positive number of nodes");
  }
}

void check_count(int value, int min, int max, const char* flag, const char* what) {
  if (value < min) {
    throw InputError(flag, fmt::format("{} {}", value, what), min == 0 ? "0 or more" : fmt::format("at least {}", min));
  }
  if (value > max) throw InputError(flag, fmt::format("{} {}", value, what), fmt::format("at most {}", max));
}

Bytes gib_to_bytes(double gib) {
  return Bytes(static_cast<std::uint64_t>(std::llround(gib * static_cast<double>(kGiB))));
}

RealRange workspace_gib_range() { return {0.0, 1048576.0, "0 to 1048576 GiB", "", false}; }

RealRange timeout_s_range() { return {0.0, 1e6, "0 (none) to 1000000 seconds", " s", false}; }

RealRange wait_report_s_range() { return {0.0, 1e6, "0 (never) to 1000000 seconds", " s", false}; }

RealRange years_range() { return {0.0, 100.0, "a positive number of years, at most 100", "", true}; }

RealRange usd_per_kwh_range() { return {0.0, 1000.0, "0 to 1000 USD per kWh", "", false}; }

RealRange node_price_range() { return {0.0, 1e12, "a positive price in USD, at most 1e12", "", true}; }

}  // namespace commscale

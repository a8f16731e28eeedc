#include "core/error.hpp"

#include <fmt/format.h>

namespace commscale {
namespace {

std::string input_message(std::string_view where, std::string_view problem, std::string_view expected) {
  if (expected.empty()) return fmt::format("{}: {}", where, problem);
  return fmt::format("{}: {} (expected {})", where, problem, expected);
}

}  // namespace

InputError::InputError(std::string_view where, std::string_view problem, std::string_view expected)
    : Error(ExitCode::kUsage, input_message(where, problem, expected)) {}

}  // namespace commscale

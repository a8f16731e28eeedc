#include "core/error.hpp"

#include <fmt/format.h>

#include "core/printable.hpp"

namespace commscale {
namespace {

// Input errors quote what the user gave (names, paths, values). Here, once for every message, control
// characters in it are escaped, so that no input reaches the terminal raw, and each part is cut to
// kMaxPartBytes, so that a value nobody cut to an excerpt still makes a message of a few lines.
constexpr std::size_t kMaxPartBytes = 1024;

std::string input_message(std::string_view where, std::string_view problem, std::string_view expected) {
  const auto part = [](std::string_view text) { return excerpt(text, kMaxPartBytes); };
  if (expected.empty()) return fmt::format("{}: {}", part(where), part(problem));
  return fmt::format("{}: {} (expected {})", part(where), part(problem), part(expected));
}

}  // namespace

InputError::InputError(std::string_view where, std::string_view problem, std::string_view expected)
    : Error(ExitCode::kUsage, input_message(where, problem, expected)) {}

}  // namespace commscale

#pragma once

// Parsing enumerations by their names, one way for the whole project: every enumeration has a
// `name(value)` and a `parse_*` that accepts exactly those names, with a message that lists them.

#include <array>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/printable.hpp"

namespace commscale {

// "a, b or c" from the names of `all`.
template <class Enum, std::size_t N>
[[nodiscard]] std::string names_of(const std::array<Enum, N>& all) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += name(all[i]);
  }
  return out;
}

// The value of `all` whose name is `text`; otherwise InputError at `where`: unknown <what> "<text>"
// (expected <expected>, by default the names of `all`); a long <text> is cut to an excerpt.
template <class Enum, std::size_t N>
[[nodiscard]] Enum parse_by_name(const std::array<Enum, N>& all, std::string_view text, std::string_view where,
                                 std::string_view what, std::string_view expected = {}) {
  for (Enum value : all) {
    if (name(value) == text) return value;
  }
  throw InputError(where, fmt::format("unknown {} \"{}\"", what, excerpt(text)),
                   expected.empty() ? names_of(all) : std::string(expected));
}

}  // namespace commscale

#pragma once

// User text echoed to a terminal (names from flags and files, file names, offending values in error
// messages) goes through these, so that no input can move the cursor, clear the screen or fill it.

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace commscale {

// `text` with every control character escaped: C0 bytes and DEL as \n, \t, \r or \xNN, the C1 code
// points U+0080..U+009F as \u0085, and bytes that are not UTF-8 as \xNN. Printable text (any valid
// UTF-8 outside those) is unchanged, and so is a backslash: escaping twice changes nothing.
[[nodiscard]] std::string printable(std::string_view text);

// The longest printable(text) prefix of at most `max_bytes` bytes, cut between characters and ended
// with "…" when something was cut.
[[nodiscard]] std::string excerpt(std::string_view text, std::size_t max_bytes = 80);

// A JSON value as it is written (strings quoted), cut to an excerpt: what error messages quote of an
// offending value, never the whole of a 10 MB string or a 50,000-element array.
[[nodiscard]] std::string json_excerpt(const nlohmann::json& value, std::size_t max_bytes = 80);

}  // namespace commscale

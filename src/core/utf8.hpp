#pragma once

// Text from outside (arguments, environment variables, host names) recorded in result files. JSON
// holds UTF-8 only, and a file name on Linux may hold any byte: such bytes are recorded escaped, so
// the run never fails while writing what it measured.

#include <string>
#include <string_view>

namespace commscale {

// `text` with each byte that is not part of a well-formed UTF-8 sequence written as \xNN (two
// upper-case hex digits). Well-formed text comes back unchanged.
[[nodiscard]] std::string escape_invalid_utf8(std::string_view text);

}  // namespace commscale

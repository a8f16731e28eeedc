#pragma once

// A JSON document as the text of a result file. Strings in a document should already be UTF-8 (text
// from outside is escaped where it is recorded: core/utf8.hpp); any byte that still is not becomes
// U+FFFD here, so writing the results never fails once the work is done.

#include <string>

#include <nlohmann/json.hpp>

namespace commscale {

// `doc` as text, with `indent` as nlohmann's dump() takes it (-1: one line), and a final newline.
template <class Json>
[[nodiscard]] std::string json_text(const Json& doc, int indent = -1) {
  return doc.dump(indent, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace commscale

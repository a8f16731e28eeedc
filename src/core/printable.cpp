#include "core/printable.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace commscale {
namespace {

// The length of the UTF-8 sequence at the start of `text` and its code point, or 0 where the bytes
// are not UTF-8 (overlong forms, surrogates and values past U+10FFFF included).
std::size_t utf8_sequence(std::string_view text, char32_t* code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  char32_t value = 0;
  char32_t smallest = 0;
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  }
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, value = lead & 0x1Fu, smallest = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, value = lead & 0x0Fu, smallest = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, value = lead & 0x07u, smallest = 0x10000;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0u) != 0x80u) return 0;
    value = (value << 6) | (byte(i) & 0x3Fu);
  }
  if (value < smallest || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  *code_point = value;
  return length;
}

std::string escaped_byte(unsigned char byte) {
  switch (byte) {
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    default: return fmt::format("\\x{:02x}", byte);
  }
}

// The printable form of the character at the start of `text`, and how many bytes it took.
std::string printable_char(std::string_view text, std::size_t* used) {
  char32_t code_point = 0;
  const std::size_t length = utf8_sequence(text, &code_point);
  *used = length == 0 ? 1 : length;
  if (length == 0) return escaped_byte(static_cast<unsigned char>(text[0]));
  if (code_point < 0x20 || code_point == 0x7F) return escaped_byte(static_cast<unsigned char>(code_point));
  if (code_point >= 0x80 && code_point <= 0x9F) return fmt::format("\\u{:04x}", static_cast<unsigned>(code_point));
  return std::string(text.substr(0, length));
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t used = 0;
    out += printable_char(text.substr(i), &used);
    i += used;
  }
  return out;
}

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t used = 0;
    const std::string piece = printable_char(text.substr(i), &used);
    if (out.size() + piece.size() > max_bytes) return out + "…";
    out += piece;
    i += used;
  }
  return out;
}

std::string json_excerpt(const nlohmann::json& value, std::size_t max_bytes) {
  // A long string is cut before it is written, so a 10 MB string is never copied whole. The cut may
  // split a character: dump() then writes U+FFFD for it instead of throwing.
  const auto dump = [](const nlohmann::json& v) { return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
  if (value.is_string() && value.get_ref<const std::string&>().size() > max_bytes) {
    return excerpt(dump(nlohmann::json(value.get_ref<const std::string&>().substr(0, max_bytes))), max_bytes);
  }
  return excerpt(dump(value), max_bytes);
}

}  // namespace commscale

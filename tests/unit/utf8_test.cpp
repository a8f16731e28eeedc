#include "core/utf8.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace commscale {
namespace {

TEST(EscapeInvalidUtf8, WellFormedTextIsUnchanged) {
  for (const char* text : {"", "ascii", "caf\xC3\xA9", "\xE2\x82\xAC 5", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF"}) {
    EXPECT_EQ(escape_invalid_utf8(text), text);
  }
}

TEST(EscapeInvalidUtf8, EachBadByteBecomesHex) {
  EXPECT_EQ(escape_invalid_utf8("out\xFF.json"), "out\\xFF.json");
  EXPECT_EQ(escape_invalid_utf8("\x80"), "\\x80");                         // a continuation byte alone
  EXPECT_EQ(escape_invalid_utf8("\xC3"), "\\xC3");                         // cut short at the end
  EXPECT_EQ(escape_invalid_utf8("\xC3("), "\\xC3(");                       // cut short by ASCII
  EXPECT_EQ(escape_invalid_utf8("\xC0\xAF"), "\\xC0\\xAF");                // overlong '/'
  EXPECT_EQ(escape_invalid_utf8("\xE0\x80\xAF"), "\\xE0\\x80\\xAF");       // overlong, three bytes
  EXPECT_EQ(escape_invalid_utf8("\xED\xA0\x80"), "\\xED\\xA0\\x80");       // a UTF-16 surrogate
  EXPECT_EQ(escape_invalid_utf8("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(escape_invalid_utf8("\xF5"), "\\xF5");
}

// Whatever the input, the result is text nlohmann's strict dump() accepts (it throws type_error.316
// on invalid UTF-8), so recording it cannot fail after the work is done.
TEST(EscapeInvalidUtf8, EveryByteSequenceDumps) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  for (int a = 0x80; a < 256; ++a) {
    for (int b = 0x00; b < 256; b += 7) all += {static_cast<char>(a), static_cast<char>(b), '\xBF', '\x80'};
  }
  EXPECT_NO_THROW((void)nlohmann::json(escape_invalid_utf8(all)).dump());
}

}  // namespace
}  // namespace commscale

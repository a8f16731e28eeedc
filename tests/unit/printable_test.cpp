// Escaping user text for the terminal (core/printable.hpp) and the excerpts error messages quote.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/printable.hpp"

namespace commscale {
namespace {

TEST(Printable, KeepsPrintableTextAndUtf8) {
  EXPECT_EQ(printable("gpt3-175b"), "gpt3-175b");
  EXPECT_EQ(printable("h200 \xc3\xa9t\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80"), "h200 \xc3\xa9t\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80");
  EXPECT_EQ(printable("a\\nb"), "a\\nb");  // a backslash stays: escaping twice changes nothing
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, EscapesC0ControlsAndDelete) {
  EXPECT_EQ(printable("tiny\nmodel"), "tiny\\nmodel");
  EXPECT_EQ(printable("a\tb\rc"), "a\\tb\\rc");
  EXPECT_EQ(printable("\x1b[2J\x1b]0;title\x07"), "\\x1b[2J\\x1b]0;title\\x07");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("x\x7fy"), "x\\x7fy");
}

TEST(Printable, EscapesC1ControlsAndBytesThatAreNotUtf8) {
  EXPECT_EQ(printable("a\xc2\x9b" "31mb"), "a\\u009b31mb");  // U+009B, CSI: a terminal reads it as ESC [
  EXPECT_EQ(printable("\xc2\x85"), "\\u0085");
  EXPECT_EQ(printable("\x9b"), "\\x9b");                  // a lone continuation byte
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");          // an overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(printable("\xe2\x80"), "\\xe2\\x80");          // cut short
}

TEST(Printable, EscapingTwiceChangesNothing) {
  const std::string once = printable("a\n\x1b\xc2\x9b\xff");
  EXPECT_EQ(printable(once), once);
}

TEST(Excerpt, ShortTextIsWhole) {
  EXPECT_EQ(excerpt("short"), "short");
  EXPECT_EQ(excerpt(std::string(80, 'x')), std::string(80, 'x'));
}

TEST(Excerpt, LongTextIsCutWithAnEllipsis) {
  EXPECT_EQ(excerpt(std::string(81, 'x')), std::string(80, 'x') + "…");
  EXPECT_EQ(excerpt(std::string(10'000'000, 'x')).size(), 80 + std::string("…").size());
  EXPECT_EQ(excerpt("abcdef", 3), "abc…");
}

TEST(Excerpt, CutsBetweenCharactersAndEscapes) {
  // "é" is two bytes: 4 bytes hold two of them, 5 bytes do not hold a third.
  EXPECT_EQ(excerpt("\xc3\xa9\xc3\xa9\xc3\xa9", 5), "\xc3\xa9\xc3\xa9…");
  // An escape is kept whole or left out: "\n" takes two bytes.
  EXPECT_EQ(excerpt("ab\ncd", 3), "ab…");
  EXPECT_EQ(excerpt("ab\ncd", 4), "ab\\n…");
}

TEST(JsonExcerpt, WritesScalarsAndSmallValuesWhole) {
  EXPECT_EQ(json_excerpt(nlohmann::json(2.5)), "2.5");
  EXPECT_EQ(json_excerpt(nlohmann::json("132")), "\"132\"");
  EXPECT_EQ(json_excerpt(nlohmann::json::parse("[1,[2,3],{\"a\":null}]")), "[1,[2,3],{\"a\":null}]");
}

TEST(JsonExcerpt, CutsLongStringsArraysAndObjects) {
  const std::string expected_string = "\"" + std::string(79, 'y') + "…";
  EXPECT_EQ(json_excerpt(nlohmann::json(std::string(10'000'000, 'y'))), expected_string);
  const nlohmann::json array(50'000, 1);
  EXPECT_EQ(json_excerpt(array).substr(0, 6), "[1,1,1");
  EXPECT_LE(json_excerpt(array).size(), 80 + std::string("…").size());
  // A string cut inside a character is written with U+FFFD, not thrown at.
  const nlohmann::json accents(std::string(200, 'a') + "\xc3\xa9");
  EXPECT_NO_THROW((void)json_excerpt(nlohmann::json(std::string(79, 'a') + "\xc3\xa9" + std::string(100, 'a'))));
  EXPECT_NO_THROW((void)json_excerpt(accents));
}

TEST(InputErrorText, EscapesControlCharactersAndBoundsEachPart) {
  const InputError e("--model-file: \x1b[31mred\n", "is \x1b[2J", "a\nfile");
  EXPECT_STREQ(e.what(), "--model-file: \\x1b[31mred\\n: is \\x1b[2J (expected a\\nfile)");
  const InputError big("where", std::string(10'000'000, 'z'));
  EXPECT_LT(std::string(big.what()).size(), 1100u);
}

}  // namespace
}  // namespace commscale

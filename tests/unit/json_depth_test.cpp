// The nesting bound of the JSON reader (hw/json_reader.hpp): every file commscale reads goes through
// parse_json_text, which refuses arrays and objects nested deeper than kMaxJsonDepth before a deep
// value exists, so nothing later (reading, printing, freeing) can run out of stack.

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hw/json_reader.hpp"
#include "input_error_matcher.hpp"
#include "workload/model_spec.hpp"

namespace commscale::hw {
namespace {

using commscale::testing::throws_input_error;

constexpr std::string_view kOtherKeys = "\"hidden\": 64, \"heads\": 4, \"seq\": 16, \"vocab\": 100";

// A model file whose "layers" is [[...[1]...]], with `levels` levels in all (the object is the first).
std::string nested(int levels) {
  return fmt::format("{{{}, \"layers\": {}1{}}}", kOtherKeys, std::string(static_cast<std::size_t>(levels - 1), '['),
                     std::string(static_cast<std::size_t>(levels - 1), ']'));
}

TEST(JsonDepth, SixtyFourLevelsParse) {
  EXPECT_EQ(kMaxJsonDepth, 64);
  const nlohmann::json doc = parse_json_text(nested(64), "deep.json");
  const nlohmann::json* v = &doc["layers"];
  int levels = 1;
  while (v->is_array()) v = &(*v)[0], ++levels;
  EXPECT_EQ(levels, 64);
  EXPECT_NO_THROW((void)parse_ordered_json_text(nested(64), "deep.json"));
}

TEST(JsonDepth, SixtyFiveLevelsAreRefused) {
  EXPECT_TRUE(throws_input_error([] { (void)parse_json_text(nested(65), "deep.json"); },
                                 {"deep.json: nests arrays and objects more than 64 levels deep", "at most 64 levels"}));
  EXPECT_TRUE(throws_input_error([] { (void)parse_ordered_json_text(nested(65), "deep.json"); },
                                 {"deep.json: nests arrays and objects more than 64 levels deep"}));
  EXPECT_TRUE(throws_input_error([] { (void)parse_json_text(std::string(65, '['), "open.json"); },
                                 {"open.json: nests arrays and objects more than 64 levels deep"}));
  EXPECT_TRUE(throws_input_error(
      [] {
        std::string objects;
        for (int i = 0; i < 70; ++i) objects += "{\"a\":";
        (void)parse_json_text(objects + "1" + std::string(70, '}'), "objects.json");
      },
      {"objects.json: nests arrays and objects more than 64 levels deep"}));
}

TEST(JsonDepth, HundredThousandLevelsAreRefusedWithoutCrashing) {
  // The 200 KB file: a SIGSEGV before the bound (a recursive dump() in the error message).
  EXPECT_TRUE(throws_input_error([] { (void)parse_json_text(nested(100'000), "deep.json"); }, {"more than 64 levels"}));
  EXPECT_TRUE(throws_input_error([] { (void)model_from_json(parse_json_text(nested(100'000), "m.json"), "m.json"); },
                                 {"more than 64 levels"}));
}

TEST(JsonDepth, MessagesQuoteAnExcerptOfTheValue) {
  // A scalar expected, a deep array or a 10 MB string given: the message quotes at most 80 bytes.
  const auto message_of = [](const std::string& text) -> std::string {
    try {
      (void)model_from_json(parse_json_text(text, "m.json"), "m.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string deep = message_of(nested(60));
  EXPECT_NE(deep.find("layers: [[[[[[[["), std::string::npos) << deep;
  EXPECT_NE(deep.find("…"), std::string::npos) << deep;
  EXPECT_LT(deep.size(), 200u) << deep;
  const std::string long_string =
      message_of(fmt::format("{{{}, \"layers\": \"{}\"}}", kOtherKeys, std::string(10'000'000, 's')));
  EXPECT_NE(long_string.find("layers: \"sss"), std::string::npos);
  EXPECT_LT(long_string.size(), 200u) << long_string;
  const std::string long_key = message_of("{\"" + std::string(1'000'000, 'k') + "\": 1}");
  EXPECT_NE(long_key.find("unknown key"), std::string::npos);
  EXPECT_LT(long_key.size(), 400u) << long_key;
}

TEST(JsonDepth, TopologyReaderQuotesAnExcerpt) {
  const nlohmann::json doc = parse_json_text("{\"n\": " + std::string(60, '[') + std::string(60, ']') + "}", "t.json");
  JsonObject o(doc, "t.json", "");
  EXPECT_TRUE(throws_input_error([&] { (void)o.integer("n", 0, 10); }, {"t.json: n: is [[[[", "…", "a whole number"}));
}

}  // namespace
}  // namespace commscale::hw

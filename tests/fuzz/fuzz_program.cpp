// libFuzzer target: step program files (`plan --dump-program`, read by diff-trace --program). Any input
// either is a set the checker proves runnable or ends in InputError naming the file; a set accepted
// here is safe to index (ranks, op lists, group handles, members, dependencies) by every engine.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hw/json_reader.hpp"
#include "program/program_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json doc = commscale::hw::parse_json_text(text, "fuzz.json");  // as program files are read
    (void)commscale::read_program_set(doc, "fuzz.json");
  } catch (const commscale::InputError&) {
  }
  return 0;
}

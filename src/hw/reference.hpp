#pragma once

// Figures every topology file builds on, each with its source: the citations behind the source keys
// (topologies/sources.json), and the per-direction PCIe bandwidth of each generation and the default
// latency of each link type (topologies/links.json).

#include <array>
#include <filesystem>
#include <map>
#include <string>

#include "core/units.hpp"
#include "hw/figure.hpp"
#include "hw/figure_io.hpp"
#include "hw/kinds.hpp"

namespace commscale::hw {

inline constexpr int kSchemaVersion = 1;

struct ReferenceData {
  SourceCitations citations;                                    // "AIB" -> full citation
  std::map<int, Figure<GBps>> pcie_x16_bw;                      // generation -> per direction, x16
  std::array<Figure<Seconds>, kLinkTypeCount> default_latency;  // by LinkType

  // Per-direction bandwidth of a PCIe link: the x16 figure scaled by width / 16 (tagged D when scaled).
  // Throws InputError naming `where` for a generation links.json does not list.
  [[nodiscard]] Figure<GBps> pcie_bw(int generation, int width, const std::string& where) const;
};

// Loads root/sources.json and root/links.json; throws InputError naming file:key on any problem.
[[nodiscard]] ReferenceData load_reference_data(const std::filesystem::path& root);

// Reads and checks the "schema_version" and "kind" keys every topology file starts with.
void read_file_header(JsonObject& file, std::string_view kind);

}  // namespace commscale::hw

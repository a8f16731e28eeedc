#include "hw/reference.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale::hw {
namespace {

SourceCitations read_citations(const std::filesystem::path& file) {
  const nlohmann::json json = read_json_file(file);
  JsonObject top(json, file.string(), "");
  read_file_header(top, "sources");
  JsonObject sources = top.object("sources");
  SourceCitations out;
  for (const auto& item : json.at("sources").items()) {
    const std::string& key = item.key();
    if (key.empty() || key.find_first_of("[] ") != std::string::npos) {
      throw InputError(sources.where(key), "is not a usable source key", "letters and digits, e.g. AIB");
    }
    out.emplace(key, sources.string(key));
  }
  sources.finish();
  top.finish();
  return out;
}

void read_links(const std::filesystem::path& file, ReferenceData& ref) {
  const nlohmann::json json = read_json_file(file);
  JsonObject top(json, file.string(), "");
  read_file_header(top, "links");
  JsonObject pcie = top.object("pcie_x16_bw_GBps");
  for (int generation = 1; generation <= 7; ++generation) {
    const std::string key = std::to_string(generation);
    if (!pcie.has(key)) continue;
    ref.pcie_x16_bw[generation] = as_gbps(read_number_figure(pcie, key, ref.citations, Nullable::kNo, 1e-9));
  }
  pcie.finish();
  JsonObject latency = top.object("latency_us");
  for (std::size_t t = 0; t < kLinkTypeCount; ++t) {
    const std::string_view type = name(static_cast<LinkType>(t));
    ref.default_latency[t] = from_us(read_number_figure(latency, type, ref.citations, Nullable::kNo));
  }
  latency.finish();
  top.finish();
}

}  // namespace

void read_file_header(JsonObject& file, std::string_view kind) {
  const int version = file.integer("schema_version", 0, 1'000'000);
  if (version != kSchemaVersion) {
    throw InputError(file.where("schema_version"), fmt::format("is {}", version), fmt::format("{}", kSchemaVersion));
  }
  const std::string found = file.string("kind");
  if (found != kind) throw InputError(file.where("kind"), fmt::format("is \"{}\"", found), fmt::format("\"{}\"", kind));
}

Figure<GBps> ReferenceData::pcie_bw(int generation, int width, const std::string& where) const {
  const auto it = pcie_x16_bw.find(generation);
  if (it == pcie_x16_bw.end()) {
    throw InputError(where, fmt::format("PCIe gen{} is not in topologies/links.json", generation),
                     "a generation listed under pcie_x16_bw_GBps");
  }
  if (width == 16) return it->second;
  Figure<GBps> out;
  out.value = *it->second.value * (width / 16.0);
  out.provenance = {SourceTag::kDerived,
                    fmt::format("x{} = {}/16 of gen{} x16 ({}: {})", width, width, generation,
                                tag_letter(it->second.provenance.tag), it->second.provenance.source),
                    {}};
  return out;
}

ReferenceData load_reference_data(const std::filesystem::path& root) {
  ReferenceData ref;
  ref.citations = read_citations(root / "sources.json");
  read_links(root / "links.json", ref);
  return ref;
}

}  // namespace commscale::hw

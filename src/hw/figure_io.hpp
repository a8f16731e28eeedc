#pragma once

// Figures as topology files write them: {"value": 312, "tag": "P", "source": "[AIB] Table 1"} with an
// optional "note". A P-tagged figure must cite a key of topologies/sources.json in brackets at the start
// of its source, so that every vendor figure can be traced to its document.

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/units.hpp"
#include "hw/figure.hpp"
#include "hw/json_reader.hpp"

namespace commscale::hw {

// Source key ("AIB") to full citation.
using SourceCitations = std::map<std::string, std::string, std::less<>>;

enum class Nullable : bool { kNo, kYes };

// Reads the tag, source and note of a figure object (the caller reads "value").
[[nodiscard]] Provenance read_provenance(JsonObject& figure, const SourceCitations& citations);

// Reads the figure at `key`. Numbers must be at least `min`; null values are accepted only when
// `nullable` is kYes. Each throws InputError naming file:key.value (or .tag, .source).
[[nodiscard]] Figure<double> read_number_figure(JsonObject& parent, std::string_view key,
                                                const SourceCitations& citations, Nullable nullable, double min = 0.0);
[[nodiscard]] Figure<int> read_integer_figure(JsonObject& parent, std::string_view key,
                                              const SourceCitations& citations, Nullable nullable, int min, int max);
[[nodiscard]] Figure<std::string> read_string_figure(JsonObject& parent, std::string_view key,
                                                     const SourceCitations& citations, Nullable nullable);
[[nodiscard]] Figure<bool> read_bool_figure(JsonObject& parent, std::string_view key, const SourceCitations& citations,
                                            Nullable nullable);

// Unit conversions of numeric figures, as the keys name them.
[[nodiscard]] Figure<GBps> as_gbps(const Figure<double>& f);
[[nodiscard]] Figure<Seconds> from_us(const Figure<double>& f);
[[nodiscard]] Figure<FlopsPerSecond> from_tflops(const Figure<double>& f);
[[nodiscard]] Figure<Bytes> from_gib(const Figure<double>& f);
[[nodiscard]] Figure<Bytes> from_mib(const Figure<double>& f);

// The file form of a figure, with its value converted back to the unit of its key.
[[nodiscard]] nlohmann::ordered_json provenance_json(const Provenance& p);
// Adds "tag", "source" and "note" to `out`.
void add_provenance(nlohmann::ordered_json& out, const Provenance& p);
template <class T, class Convert>
[[nodiscard]] nlohmann::ordered_json figure_json(const Figure<T>& f, Convert to_file_unit) {
  nlohmann::ordered_json out;
  if (f.value) {
    out["value"] = to_file_unit(*f.value);
  } else {
    out["value"] = nullptr;
  }
  add_provenance(out, f.provenance);
  return out;
}
template <class T>
[[nodiscard]] nlohmann::ordered_json figure_json(const Figure<T>& f) {
  return figure_json(f, [](const T& v) { return v; });
}

[[nodiscard]] inline double to_tflops(FlopsPerSecond r) noexcept { return r.value() / 1e12; }
[[nodiscard]] inline double to_gib(Bytes b) noexcept { return b.gib(); }
[[nodiscard]] inline double to_mib(Bytes b) noexcept { return static_cast<double>(b.count()) / kMiB; }

}  // namespace commscale::hw

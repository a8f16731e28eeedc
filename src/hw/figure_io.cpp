#include "hw/figure_io.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale::hw {
namespace {

// The "[KEY]" a source starts with, or empty.
std::string_view cited_key(std::string_view source) {
  if (source.empty() || source.front() != '[') return {};
  const std::size_t close = source.find(']');
  return close == std::string_view::npos ? std::string_view{} : source.substr(1, close - 1);
}

// Reads the figure object at `key` and hands its value (possibly null) to `parse`.
template <class T, class Parse>
Figure<T> read_figure(JsonObject& parent, std::string_view key, const SourceCitations& citations, Nullable nullable,
                      Parse parse) {
  JsonObject object = parent.object(key);
  const nlohmann::json& value = object.required("value");
  Figure<T> out;
  if (value.is_null()) {
    if (nullable == Nullable::kNo)
      throw InputError(object.where("value"), "is null", "a value: this figure is required");
  } else {
    out.value = parse(value, object.where("value"));
  }
  out.provenance = read_provenance(object, citations);
  object.finish();
  return out;
}

template <class T, class Convert>
auto convert(const Figure<T>& f, Convert c) {
  Figure<decltype(c(*f.value))> out;
  if (f.value) out.value = c(*f.value);
  out.provenance = f.provenance;
  return out;
}

}  // namespace

Provenance read_provenance(JsonObject& figure, const SourceCitations& citations) {
  Provenance p;
  const std::string letter = figure.string("tag");
  const std::optional<SourceTag> tag = parse_tag(letter);
  if (!tag) throw InputError(figure.where("tag"), fmt::format("\"{}\" is not a tag", letter), "P, D, S, U or M");
  p.tag = *tag;
  p.source = figure.string("source");
  if (p.source.empty()) throw InputError(figure.where("source"), "is empty", "where the figure comes from");
  const std::string_view key = cited_key(p.source);
  if (p.tag == SourceTag::kPrimary && key.empty()) {
    throw InputError(figure.where("source"), fmt::format("\"{}\" cites no document", p.source),
                     "a P figure's source to start with a key of topologies/sources.json, e.g. \"[AIB] Table 1\"");
  }
  if (!key.empty() && !citations.contains(key)) {
    throw InputError(figure.where("source"), fmt::format("cites [{}], which topologies/sources.json lacks", key),
                     "a key of topologies/sources.json");
  }
  if (const nlohmann::json* note = figure.optional("note")) p.note = expect_string(*note, figure.where("note"));
  return p;
}

Figure<double> read_number_figure(JsonObject& parent, std::string_view key, const SourceCitations& citations,
                                  Nullable nullable, double min) {
  return read_figure<double>(parent, key, citations, nullable, [min](const nlohmann::json& v, const std::string& w) {
    const double x = expect_number(v, w);
    if (!std::isfinite(x) || x < min) {
      // Positive figures pass a tiny minimum; say "more than 0" rather than print it.
      throw InputError(w, fmt::format("is {}", x),
                       min == 0.0   ? "0 or more"
                       : min < 1e-6 ? "more than 0"
                                    : fmt::format("at least {}", min));
    }
    return x;
  });
}

Figure<int> read_integer_figure(JsonObject& parent, std::string_view key, const SourceCitations& citations,
                                Nullable nullable, int min, int max) {
  return read_figure<int>(parent, key, citations, nullable, [min, max](const nlohmann::json& v, const std::string& w) {
    return expect_integer(v, w, min, max);
  });
}

Figure<std::string> read_string_figure(JsonObject& parent, std::string_view key, const SourceCitations& citations,
                                       Nullable nullable) {
  return read_figure<std::string>(parent, key, citations, nullable, [](const nlohmann::json& v, const std::string& w) {
    std::string s = expect_string(v, w);
    if (s.empty()) throw InputError(w, "is empty", "a non-empty string, or null");
    return s;
  });
}

Figure<bool> read_bool_figure(JsonObject& parent, std::string_view key, const SourceCitations& citations,
                              Nullable nullable) {
  return read_figure<bool>(parent, key, citations, nullable, expect_boolean);
}

Figure<GBps> as_gbps(const Figure<double>& f) {
  return convert(f, [](double v) { return GBps(v); });
}
Figure<Seconds> from_us(const Figure<double>& f) {
  return convert(f, [](double v) { return microseconds(v); });
}
Figure<FlopsPerSecond> from_tflops(const Figure<double>& f) {
  return convert(f, [](double v) { return tflops_per_s(v); });
}
Figure<Bytes> from_gib(const Figure<double>& f) {
  return convert(f, [](double v) { return Bytes(static_cast<std::uint64_t>(std::llround(v * kGiB))); });
}
Figure<Bytes> from_mib(const Figure<double>& f) {
  return convert(f, [](double v) { return Bytes(static_cast<std::uint64_t>(std::llround(v * kMiB))); });
}

void add_provenance(nlohmann::ordered_json& out, const Provenance& p) {
  out["tag"] = tag_letter(p.tag);
  out["source"] = p.source;
  if (!p.note.empty()) out["note"] = p.note;
}

nlohmann::ordered_json provenance_json(const Provenance& p) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  add_provenance(out, p);
  return out;
}

}  // namespace commscale::hw

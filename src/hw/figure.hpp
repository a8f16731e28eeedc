#pragma once

// Every hardware figure in the catalog says where it came from, with a tag (topologies/README.md):
// P vendor document, D derived from other figures, S secondary source only, U unverified, plus M for
// figures measured on this project's machines. A figure may have no value: the part has no such unit
// (V100 FP8) or nobody has a trustworthy number (tag U); its source says which.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace commscale::hw {

enum class SourceTag : std::uint8_t { kPrimary, kDerived, kSecondary, kUnverified, kMeasured };

[[nodiscard]] std::string_view tag_letter(SourceTag tag) noexcept;   // "P", "D", "S", "U", "M"
[[nodiscard]] std::string_view tag_meaning(SourceTag tag) noexcept;  // "vendor document", ...
// Parses a tag letter; nullopt for anything else.
[[nodiscard]] std::optional<SourceTag> parse_tag(std::string_view letter) noexcept;

struct Provenance {
  SourceTag tag = SourceTag::kUnverified;
  std::string source;  // "[AIB] Table 1", a derivation, or the measurement's date and tool
  std::string note;    // optional remark shown with the figure

  bool operator==(const Provenance&) const = default;
};

template <class T>
struct Figure {
  std::optional<T> value;  // empty: none on this part, or unknown (tag U) — the source says which
  Provenance provenance;

  [[nodiscard]] bool known() const noexcept { return value.has_value(); }
  bool operator==(const Figure&) const = default;
};

template <class T>
[[nodiscard]] Figure<T> figure(T value, SourceTag tag, std::string source) {
  return Figure<T>{std::optional<T>(std::move(value)), Provenance{tag, std::move(source), {}}};
}

}  // namespace commscale::hw

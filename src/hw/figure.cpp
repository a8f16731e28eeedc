#include "hw/figure.hpp"

#include <array>

namespace commscale::hw {
namespace {

struct TagInfo {
  SourceTag tag;
  std::string_view letter;
  std::string_view meaning;
};

constexpr std::array<TagInfo, 5> kTags = {{
    {SourceTag::kPrimary, "P", "vendor document"},
    {SourceTag::kDerived, "D", "derived from other figures"},
    {SourceTag::kSecondary, "S", "secondary source only"},
    {SourceTag::kUnverified, "U", "unverified"},
    {SourceTag::kMeasured, "M", "measured on this project's machines"},
}};

}  // namespace

std::string_view tag_letter(SourceTag tag) noexcept { return kTags[static_cast<std::size_t>(tag)].letter; }
std::string_view tag_meaning(SourceTag tag) noexcept { return kTags[static_cast<std::size_t>(tag)].meaning; }

std::optional<SourceTag> parse_tag(std::string_view letter) noexcept {
  for (const TagInfo& info : kTags) {
    if (info.letter == letter) return info.tag;
  }
  return std::nullopt;
}

}  // namespace commscale::hw

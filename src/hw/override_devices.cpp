#include "hw/override_devices.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

namespace commscale::hw {
namespace {

const nlohmann::json* devices_of(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("node") || !doc["node"].is_object()) return nullptr;
  const nlohmann::json& node = doc["node"];
  if (!node.contains("devices") || !node["devices"].is_object()) return nullptr;
  return &node["devices"];
}

std::optional<int> count_of(const nlohmann::json* devices, const std::string& kind) {
  if (devices == nullptr || !devices->contains(kind)) return 0;  // an absent optional kind has none
  const nlohmann::json& v = (*devices)[kind];
  if (!v.is_number_integer()) return std::nullopt;
  return v.get<int>();
}

// Whether a link end's name ("gpu5"; never "gpu*") is a device the changes removed.
bool removed(const nlohmann::json& name, const std::map<std::string, int>& kept) {
  if (!name.is_string()) return false;
  const std::string text = name.get<std::string>();
  const std::size_t digits = text.find_last_not_of("0123456789") + 1;
  if (digits == 0 || digits == text.size() || text.size() - digits > 9) return false;
  const auto found = kept.find(text.substr(0, digits));
  if (found == kept.end()) return false;
  return std::stol(text.substr(digits)) >= found->second;
}

// Drops the removed names of one end ("a" or "b") given as an array; true when the end is left empty.
bool drop_from(nlohmann::json& end, const std::map<std::string, int>& kept) {
  if (!end.is_array()) return removed(end, kept);
  nlohmann::json left = nlohmann::json::array();
  for (const nlohmann::json& name : end) {
    if (!removed(name, kept)) left.push_back(name);
  }
  end = left;
  return end.empty();
}

// A "zip" entry keeps the pairs whose ends both stay.
bool drop_pairs(nlohmann::json& entry, const std::map<std::string, int>& kept) {
  nlohmann::json a = nlohmann::json::array();
  nlohmann::json b = nlohmann::json::array();
  for (std::size_t i = 0; i < entry["a"].size(); ++i) {
    if (removed(entry["a"][i], kept) || removed(entry["b"][i], kept)) continue;
    a.push_back(entry["a"][i]);
    b.push_back(entry["b"][i]);
  }
  entry["a"] = a;
  entry["b"] = b;
  return a.empty();
}

std::string removed_text(const std::vector<DeviceCountChange>& changes) {
  std::string out;
  for (const DeviceCountChange& c : changes) {
    if (c.to >= c.from) continue;
    const std::string range = c.to + 1 == c.from ? fmt::format("{}{}", c.kind, c.to)
                                                 : fmt::format("{}{} to {}{}", c.kind, c.to, c.kind, c.from - 1);
    out += fmt::format("{}{}", out.empty() ? "" : ", ", range);
  }
  return out;
}

std::string list(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (const std::string& s : items) out += fmt::format("{}{}", out.empty() ? "" : separator, s);
  return out;
}

}  // namespace

std::vector<DeviceCountChange> device_count_changes(const nlohmann::json& original, const nlohmann::json& patched) {
  const nlohmann::json* before = devices_of(original);
  const nlohmann::json* after = devices_of(patched);
  std::vector<DeviceCountChange> out;
  if (before == nullptr || after == nullptr) return out;
  for (const auto& item : after->items()) {
    const std::string& kind = item.key();
    const std::optional<int> from = count_of(before, kind);
    const std::optional<int> to = count_of(after, kind);
    if (from && to && *from != *to && *to >= 0) out.push_back({kind, *from, *to});
  }
  return out;
}

std::optional<std::string> drop_removed_devices(nlohmann::json& patched, const std::vector<DeviceCountChange>& changes,
                                                const std::vector<Override>& overrides) {
  std::map<std::string, int> kept;
  for (const DeviceCountChange& c : changes) {
    if (c.to < c.from) kept[c.kind] = c.to;
  }
  if (kept.empty() || !patched["node"].contains("links") || !patched["node"]["links"].is_array()) return std::nullopt;
  nlohmann::json& links = patched["node"]["links"];
  nlohmann::json left = nlohmann::json::array();
  std::vector<std::string> dropped;
  std::vector<std::string> trimmed;
  for (std::size_t i = 0; i < links.size(); ++i) {
    nlohmann::json entry = links[i];
    const bool linkish = entry.is_object() && entry.contains("a") && entry.contains("b");
    if (!linkish) {
      left.push_back(entry);
      continue;
    }
    const bool zip = entry.contains("connect") && entry["connect"] == "zip" && entry["a"].is_array() &&
                     entry["b"].is_array() && entry["a"].size() == entry["b"].size();
    const bool gone = zip ? drop_pairs(entry, kept) : (drop_from(entry["a"], kept) || drop_from(entry["b"], kept));
    if (gone) {
      dropped.push_back(fmt::format("node.links[{}]", i));
    } else {
      if (entry != links[i]) trimmed.push_back(fmt::format("node.links[{}]", i));
      left.push_back(entry);
    }
  }
  links = left;
  if (dropped.empty() && trimmed.empty()) return std::nullopt;
  std::vector<std::string> what;
  if (!dropped.empty()) what.push_back(fmt::format("{} dropped", list(dropped)));
  if (!trimmed.empty()) what.push_back(fmt::format("{} without them", list(trimmed)));
  std::vector<std::string> flags;
  for (const Override& o : overrides) {
    if (o.key.rfind("node.devices.", 0) == 0) flags.push_back(fmt::format("{} {}", o.flag, o.text));
  }
  return fmt::format("{} removes {} and their links (the file's entries: {})", list(flags), removed_text(changes),
                     list(what, "; "));
}

std::string grown_devices_hint(const std::vector<DeviceCountChange>& changes, const std::string& cluster_name) {
  std::vector<std::string> grown;
  std::vector<std::string> most;
  for (const DeviceCountChange& c : changes) {
    if (c.to <= c.from) continue;
    grown.push_back(fmt::format("node.devices.{} is {} where the file has {}, and its links reach the new {}s only "
                                "through \"{}*\" entries",
                                c.kind, c.to, c.from, c.kind, c.kind));
    most.push_back(fmt::format("{} {}s", c.from, c.kind));
  }
  if (grown.empty()) return {};
  return fmt::format(
      "{}: use at most {} (fewer drop the others' links), or write a cluster file that describes the new devices' "
      "links (start from `commscale hw show {} --json`, without its \"derived\" object)",
      list(grown, "; "), list(most, " and "), cluster_name);
}

}  // namespace commscale::hw

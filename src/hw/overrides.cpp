#include "hw/overrides.hpp"

#include <array>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/printable.hpp"

namespace commscale::hw {
namespace {

// Unit suffixes of figure keys (topologies/README.md: units in key names): a key absent from the file
// that ends in one is written as a figure.
constexpr std::array<std::string_view, 10> kFigureSuffixes = {"_GBps", "_Gbps", "_us",  "_USD",    "_W",
                                                              "_GiB",  "_MiB",  "_MHz", "_TFLOPS", "_chips"};

bool is_figure_key(std::string_view key) {
  for (std::string_view s : kFigureSuffixes) {
    if (key.size() > s.size() && key.substr(key.size() - s.size()) == s) return true;
  }
  return false;
}

std::string expand_shorthand(const std::string& key) {
  if (key == "node.gpus") return "node.devices.gpu";
  if (key == "node.nics") return "node.devices.nic";
  return key;
}

// "node.links[3].bw_GBps" -> node, links, [3], bw_GBps (an index is kept as "[3]").
std::vector<std::string> split_path(const std::string& key, const std::string& text, std::string_view flag) {
  std::vector<std::string> parts;
  std::string part;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (c == '.' || c == '[') {
      if (!part.empty()) parts.push_back(part);
      part.clear();
      if (c == '[') part.push_back('[');
    } else if (c == ']') {
      part.push_back(']');
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) parts.push_back(part);
  for (const std::string& p : parts) {
    if (p.empty() || p == "[]" ||
        (p.front() == '[' && (p.back() != ']' || p.find_first_not_of("0123456789", 1) != p.size() - 1))) {
      throw InputError(flag, fmt::format("\"{}\": the key is not a path", excerpt(text)),
                       "KEY=VALUE with KEY a path of the topology JSON: network.nic_rate_Gbps, node.links[3].bw_GBps");
    }
  }
  return parts;
}

nlohmann::json figure_of(const Override& o) {
  return {{"value", o.value}, {"tag", "U"}, {"source", fmt::format("what-if: {} {}", o.flag, o.text)}};
}

// Walks to the parent of the last part, making objects on the way, and sets it.
void set_path(nlohmann::json& doc, const std::vector<std::string>& parts, const Override& o) {
  nlohmann::json* at = &doc;
  std::string path;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p.front() == '[') {
      const std::size_t index = std::stoul(p.substr(1, p.size() - 2));
      if (!at->is_array() || index >= at->size()) {
        throw InputError(fmt::format("{} {}", o.flag, o.text),
                         fmt::format("{} has {} entries", path, at->is_array() ? at->size() : 0),
                         "an index of an entry the file has");
      }
      at = &(*at)[index];
    } else {
      if (!at->is_object())
        throw InputError(fmt::format("{} {}", o.flag, o.text), fmt::format("{} is not an object", path));
      at = &(*at)[p];  // made when absent: the loader then says what else the new object needs
      if (at->is_null() && parts[i + 1].front() != '[') *at = nlohmann::json::object();
    }
    path += (path.empty() || p.front() == '[' ? "" : ".") + p;
  }
  const std::string& last = parts.back();
  if (last.front() == '[' || !at->is_object()) {
    throw InputError(fmt::format("{} {}", o.flag, o.text), "the key does not end in an object's key",
                     "a key of the topology JSON");
  }
  nlohmann::json& target = (*at)[last];
  const bool figure = (target.is_object() && target.contains("value")) || (target.is_null() && is_figure_key(last));
  target = figure ? figure_of(o) : o.value;
}

void apply(nlohmann::json& doc, const std::vector<Override>& overrides, bool gpu) {
  for (const Override& o : overrides) {
    if (o.on_gpu() != gpu) continue;
    std::vector<std::string> parts = split_path(o.key, o.text, o.flag);
    if (gpu) parts.erase(parts.begin());
    set_path(doc, parts, o);
  }
}

}  // namespace

Override parse_override(const std::string& item, std::string_view flag) {
  const std::size_t eq = item.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
    throw InputError(flag, fmt::format("\"{}\"", excerpt(item)),
                     "KEY=VALUE, KEY a path of the topology JSON (network.nic_rate_Gbps=400, gpu.memory_GiB=48)");
  }
  Override o;
  o.key = expand_shorthand(item.substr(0, eq));
  o.text = item;
  o.flag = std::string(flag);
  const std::string value = item.substr(eq + 1);
  o.value = nlohmann::json::parse(value, nullptr, false);
  if (o.value.is_discarded() || o.value.is_object() || o.value.is_array()) o.value = printable(value);
  (void)split_path(o.key, item, flag);  // a malformed key is an error now, not when a cluster is loaded
  return o;
}

std::vector<Override> parse_overrides(const std::vector<std::string>& items, std::string_view flag) {
  std::vector<Override> out;
  for (const std::string& item : items) out.push_back(parse_override(item, flag));
  return out;
}

void apply_cluster_overrides(nlohmann::json& cluster, const std::vector<Override>& overrides) {
  apply(cluster, overrides, false);
}

void apply_gpu_overrides(nlohmann::json& gpu, const std::vector<Override>& overrides) { apply(gpu, overrides, true); }

std::string overrides_text(const std::vector<Override>& overrides) {
  std::string out;
  for (const Override& o : overrides) out += fmt::format("{}{} {}", out.empty() ? "" : " ", o.flag, o.text);
  return out;
}

nlohmann::json overrides_json(const std::vector<Override>& overrides) {
  nlohmann::json out = nlohmann::json::array();
  for (const Override& o : overrides) out.push_back(o.text);
  return out;
}

}  // namespace commscale::hw

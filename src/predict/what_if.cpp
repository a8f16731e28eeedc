#include "predict/what_if.hpp"

#include <fmt/format.h>

namespace commscale::predict {

bool network_key(const std::string& key) { return key == "network" || key.rfind("network.", 0) == 0; }

std::vector<std::string> unused_override_warnings(const std::vector<hw::Override>& overrides, const std::string& what,
                                                  const std::string& cluster, int nodes) {
  std::vector<std::string> out;
  if (nodes > 1) return out;
  for (const hw::Override& o : overrides) {
    if (!network_key(o.key)) continue;
    out.push_back(fmt::format(
        "{} {} changes nothing for {}: it runs on one node of {}, so no traffic crosses the network", o.flag, o.text,
        what, cluster));
  }
  return out;
}

}  // namespace commscale::predict

#include "predict/host_catalog.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "hw/json_reader.hpp"
#include "hw/topology_dir.hpp"
#include "predict/calibration_sections.hpp"

namespace commscale::predict {
namespace {

HostCosts no_host() {
  HostCosts h;
  h.framework = std::string(kNoHost);
  h.source = "device time alone: no host costs";
  return h;
}

}  // namespace

std::vector<HostCosts> read_frameworks_file(const std::string& path) {
  const nlohmann::json doc = hw::read_json_file(path);
  hw::JsonObject top(doc, path, "");
  if (top.integer("schema_version", 0, 1000) != 1) throw InputError(top.where("schema_version"), "unsupported version", "1");
  if (top.string("kind") != "frameworks") throw InputError(top.where("kind"), "not a frameworks file", "\"frameworks\"");
  std::vector<HostCosts> out = {no_host()};
  for (hw::JsonObject& o : top.objects("frameworks")) {
    HostCosts h = read_host_costs(o);
    if (h.framework == kNoHost) throw InputError(o.where("framework"), "\"none\" is built in", "another name");
    out.push_back(std::move(h));
  }
  reject_duplicate_host(out, top.where("frameworks"));
  top.finish();
  return out;
}

std::vector<HostCosts> catalog_host_costs() {
  return read_frameworks_file((hw::find_topologies_dir() / "frameworks.json").string());
}

HostCosts host_costs_for(const std::string& framework, const CalibrationProfile* profile, const std::string& flag) {
  if (profile != nullptr) {
    if (const HostCosts* h = find_host_costs(*profile, framework)) return *h;
  }
  const std::vector<HostCosts> catalog = catalog_host_costs();
  std::string known;
  for (const HostCosts& h : catalog) {
    if (h.framework == framework) return h;
    known += (known.empty() ? "" : ", ") + h.framework;
  }
  if (profile != nullptr) {
    for (const HostCosts& h : profile->host) known += ", " + h.framework + " (" + profile->file + ")";
  }
  throw InputError(flag, fmt::format("unknown framework \"{}\"", printable(framework)), known);
}

}  // namespace commscale::predict

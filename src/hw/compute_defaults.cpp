#include "hw/compute_defaults.hpp"

#include <map>
#include <mutex>

#include "core/error.hpp"
#include "hw/figure_io.hpp"
#include "hw/json_reader.hpp"
#include "hw/topology_dir.hpp"

namespace commscale::hw {
namespace {

// No P-tagged figure in compute.json cites a vendor key, so no citations are needed to read it.
const SourceCitations kNoCitations;

Figure<double> read_fraction(JsonObject& entry, std::string_view key) {
  Figure<double> f = read_number_figure(entry, key, kNoCitations, Nullable::kNo, 0.0);
  if (*f.value <= 0.0 || *f.value > 1.0) {
    throw InputError(entry.where(key) + ".value", "out of range", "a fraction in (0, 1]");
  }
  return f;
}

ComputeDefaults read_family(JsonObject& o) {
  ComputeDefaults d;
  d.family = o.string("family");
  d.label = o.string("label");
  d.compute_capability = o.string("compute_capability");
  d.market = o.string("market");
  if (d.market != "any" && d.market != name(Market::kDatacenter) && d.market != name(Market::kProfessional) &&
      d.market != name(Market::kGeforce)) {
    throw InputError(o.where("market"), "unknown market", "datacenter, professional, geforce or any");
  }
  d.gemm_efficiency_ceiling = read_fraction(o, "gemm_efficiency_ceiling");
  d.gemm_call_us = read_number_figure(o, "gemm_call_us", kNoCitations, Nullable::kNo, 0.0);
  d.pytorch_gemm_efficiency_ceiling = read_fraction(o, "pytorch_gemm_efficiency_ceiling");
  d.pytorch_gemm_call_us = read_number_figure(o, "pytorch_gemm_call_us", kNoCitations, Nullable::kNo, 0.0);
  d.memory_kernel_efficiency = read_fraction(o, "memory_kernel_efficiency");
  d.memory_kernel_us = read_number_figure(o, "memory_kernel_us", kNoCitations, Nullable::kNo, 0.0);
  d.copy_efficiency = read_fraction(o, "copy_efficiency");
  o.finish();
  return d;
}

}  // namespace

ComputeCatalog parse_compute_catalog(const nlohmann::json& doc, const std::string& file) {
  JsonObject top(doc, file, "");
  if (top.integer("schema_version", 0, 1000) != 1)
    throw InputError(top.where("schema_version"), "unsupported version", "1");
  if (top.string("kind") != "compute_defaults") {
    throw InputError(top.where("kind"), "not a compute defaults file", "\"compute_defaults\"");
  }
  (void)top.optional("note");
  ComputeCatalog c;
  c.file = file;
  c.default_family = top.string("default_family");
  for (JsonObject& o : top.objects("families")) {
    ComputeDefaults d = read_family(o);
    for (const ComputeDefaults& seen : c.families) {
      if (seen.family == d.family) throw InputError(o.where("family"), "a second entry", "one entry per family");
      if (seen.compute_capability == d.compute_capability && seen.market == d.market) {
        throw InputError(o.where("market"), "a second entry for this compute capability and market", "one entry");
      }
    }
    c.families.push_back(std::move(d));
  }
  bool known = false;
  for (const ComputeDefaults& d : c.families) known = known || d.family == c.default_family;
  if (!known) throw InputError(top.where("default_family"), "names no entry of families", "a family of the file");
  top.finish();
  return c;
}

ComputeCatalog read_compute_catalog(const std::filesystem::path& file) {
  return parse_compute_catalog(read_json_file(file), file.string());
}

const ComputeCatalog& compute_catalog() {
  static std::mutex mutex;
  static std::map<std::filesystem::path, ComputeCatalog> read;
  const std::filesystem::path file = find_topologies_dir() / "compute.json";
  const std::lock_guard lock(mutex);
  auto it = read.find(file);
  if (it == read.end()) it = read.emplace(file, read_compute_catalog(file)).first;
  return it->second;
}

ComputeMatch match_compute_defaults(const ComputeCatalog& catalog, const GpuSpec& gpu) {
  const std::string cc = gpu.compute_capability.value.value_or("");
  const ComputeDefaults* any = nullptr;
  for (const ComputeDefaults& d : catalog.families) {
    if (d.compute_capability != cc) continue;
    if (d.market == name(gpu.market)) return {&d, false};
    if (d.market == "any") any = &d;
  }
  if (any != nullptr) return {any, false};
  for (const ComputeDefaults& d : catalog.families) {
    if (d.family == catalog.default_family) return {&d, true};
  }
  return {};
}

}  // namespace commscale::hw

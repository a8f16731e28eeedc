#include "predict/validation_coverage.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/json_reader.hpp"
#include "hw/topology_dir.hpp"

namespace commscale::predict {

std::vector<ValidationEntry> read_validation_file(const std::string& path) {
  const nlohmann::json doc = hw::read_json_file(path);
  hw::JsonObject top(doc, path, "");
  if (top.integer("schema_version", 0, 1000) != 1)
    throw InputError(top.where("schema_version"), "unsupported version", "1");
  if (top.string("kind") != "validation")
    throw InputError(top.where("kind"), "not a validation file", "\"validation\"");
  (void)top.string("note");
  std::vector<ValidationEntry> out;
  for (hw::JsonObject& o : top.objects("entries")) {
    ValidationEntry e;
    e.gpu = o.string("gpu");
    e.framework = o.string("framework");
    e.rows = o.integer("rows", 1, 1 << 20);
    e.signed_mean_pct = o.number("signed_mean_pct");
    e.mape_pct = o.number("mape_pct");
    if (e.mape_pct < 0) throw InputError(o.where("mape_pct"), fmt::format("is {}", e.mape_pct), "0 or more");
    e.against = o.string("against");
    o.finish();
    if (find_validation(out, e.gpu, e.framework) != nullptr) {
      throw InputError(o.where(), fmt::format("{} under {} is listed twice", e.gpu, e.framework), "each pair once");
    }
    out.push_back(std::move(e));
  }
  top.finish();
  return out;
}

std::vector<ValidationEntry> catalog_validation() {
  const std::filesystem::path file = hw::find_topologies_dir() / "validation.json";
  if (!std::filesystem::exists(file)) return {};
  return read_validation_file(file.string());
}

const ValidationEntry* find_validation(const std::vector<ValidationEntry>& entries, const std::string& gpu,
                                       const std::string& framework) {
  for (const ValidationEntry& e : entries) {
    if (e.gpu == gpu && e.framework == framework) return &e;
  }
  return nullptr;
}

std::string validation_line(const std::vector<ValidationEntry>& entries, const std::string& gpu,
                            const std::string& framework) {
  if (const ValidationEntry* e = find_validation(entries, gpu, framework)) {
    return fmt::format("{} measured run{} of {} under {}: signed mean {:+.1f}%, MAPE {:.1f}% ({})", e->rows,
                       e->rows == 1 ? "" : "s", gpu, framework, e->signed_mean_pct, e->mape_pct, e->against);
  }
  return fmt::format(
      "warning: no measured run of {} under {} has been predicted, so this prediction is unchecked "
      "(topologies/validation.json)",
      gpu, framework);
}

}  // namespace commscale::predict

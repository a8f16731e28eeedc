#include "report/result_files.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/printable.hpp"
#include "hw/json_reader.hpp"

namespace commscale {
namespace {

constexpr std::array<std::pair<std::string_view, ResultKind>, 9> kKinds = {{
    {"commscale-bench", ResultKind::kBench},
    {"commscale-p2p", ResultKind::kP2p},
    {"commscale-topo", ResultKind::kTopo},
    {"commscale-train", ResultKind::kTrain},
    {"commscale-prediction", ResultKind::kPrediction},
    {"commscale-compare", ResultKind::kCompare},
    {"commscale-search", ResultKind::kSearch},
    {"commscale-plan", ResultKind::kPlan},
    {"commscale-doctor", ResultKind::kDoctor},
}};

std::string type_name(const nlohmann::json& v) { return v.type_name(); }

// Why a parsed document is not rendered.
std::string unrecognized(const nlohmann::json& doc) {
  if (!doc.is_object()) return fmt::format("a JSON {}, not a commscale result", type_name(doc));
  const auto kind = doc.find("kind");
  if (kind == doc.end()) return "no \"kind\" key: not a commscale result (nor a Chrome trace)";
  if (kind->is_string()) return fmt::format("kind \"{}\" is not one report renders", excerpt(kind->get<std::string>()));
  return "\"kind\" is not a string";
}

// Every kind report renders is at schema version 1 (a Chrome trace has none). A file of another
// version would be drawn from keys that may mean something else: say so rather than render it.
std::string unsupported_version(const nlohmann::json& doc, ResultKind kind) {
  const auto version = doc.find("schema_version");
  if (kind == ResultKind::kChromeTrace || version == doc.end() || *version == 1) return {};
  const std::string shown = version->is_number() ? version->dump() : std::string("not a number");
  return fmt::format("schema_version {} is not one this build reads (expected 1)", shown);
}

void add_file(const std::filesystem::path& path, bool named, LoadedResults* out) {
  nlohmann::json doc;
  try {
    doc = hw::read_json_file(path);
  } catch (const InputError&) {
    if (named) throw;
    out->skipped.push_back(fmt::format("{}: not valid JSON", printable(path.string())));
    return;
  }
  const std::optional<ResultKind> kind = result_kind(doc);
  if (!kind) {
    out->skipped.push_back(fmt::format("{}: {}", printable(path.string()), unrecognized(doc)));
    return;
  }
  if (const std::string problem = unsupported_version(doc, *kind); !problem.empty()) {
    if (named) throw InputError(path.string(), problem);
    out->skipped.push_back(fmt::format("{}: {}", path.string(), problem));
    return;
  }
  // plan --json and a plan file (search --best-plan-file, the input of --plan-file) share their kind; the
  // plan file has no figures to draw.
  if (*kind == ResultKind::kPlan && !doc.contains("world_size")) {
    out->skipped.push_back(fmt::format(
        "{}: a plan file (model, plan, cluster; no figures): `commscale plan --plan-file {} --json > SUMMARY.json` "
        "writes what report draws of a plan",
        printable(path.string()), printable(path.string())));
    return;
  }
  out->files.push_back(ResultFile{path, path.stem().string(), *kind, std::move(doc)});
}

// Equal stems get their parent folder's name in front ("nvlink/bench", "p2p-off/bench").
void make_labels_unique(std::vector<ResultFile>* files) {
  std::map<std::string, int> count;
  for (const ResultFile& f : *files) ++count[f.label];
  for (ResultFile& f : *files) {
    if (count[f.label] > 1 && f.path.has_parent_path()) {
      f.label = (f.path.parent_path().filename() / f.path.stem()).generic_string();
    }
  }
  std::map<std::string, int> seen;
  for (ResultFile& f : *files) {
    const int n = ++seen[f.label];
    if (n > 1) f.label += fmt::format(" ({})", n);
  }
}

}  // namespace

std::optional<ResultKind> result_kind(const nlohmann::json& doc) {
  if (!doc.is_object()) return std::nullopt;
  const auto kind = doc.find("kind");
  if (kind != doc.end() && kind->is_string()) {
    const std::string k = kind->get<std::string>();
    for (const auto& [name, value] : kKinds) {
      if (k == name) return value;
    }
    return std::nullopt;
  }
  const auto events = doc.find("traceEvents");
  if (kind == doc.end() && events != doc.end() && events->is_array()) return ResultKind::kChromeTrace;
  return std::nullopt;
}

std::string_view kind_name(ResultKind kind) {
  for (const auto& [name, value] : kKinds) {
    if (value == kind) return name;
  }
  return "chrome-trace";
}

LoadedResults load_results(const std::vector<std::string>& paths) {
  LoadedResults out;
  for (const std::string& p : paths) {
    const std::filesystem::path path(p);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      for (const auto& f : list_input_folder(path, ".json", true)) add_file(f, false, &out);
    } else if (input_exists(path)) {
      add_file(path, true, &out);
    } else {
      throw InputError(p, "no such file or folder", "a result file (JSON) or a folder of them");
    }
  }
  make_labels_unique(&out.files);
  return out;
}

JsonAt root_of(const ResultFile& file) { return JsonAt(file.doc, file.path.string() + ": "); }

}  // namespace commscale

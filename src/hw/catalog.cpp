#include "hw/catalog.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/printable.hpp"
#include "hw/json_reader.hpp"
#include "hw/override_devices.hpp"

namespace commscale::hw {
namespace {

std::vector<std::string> stems(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const std::filesystem::path& file : list_input_folder(dir, ".json", false)) out.push_back(file.stem().string());
  return out;
}

void check_catalog_name(const std::string& found, const std::filesystem::path& file) {
  if (found != file.stem().string()) {
    throw InputError(fmt::format("{}: name", file.string()), fmt::format("is \"{}\"", found),
                     fmt::format("\"{}\", the file's name in the catalog", file.stem().string()));
  }
}

}  // namespace

bool looks_like_path(std::string_view name_or_path) noexcept {
  return name_or_path.find('/') != std::string_view::npos ||
         (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
}

Catalog::Catalog(std::filesystem::path root, ReferenceData reference)
    : root_(std::move(root)), reference_(std::move(reference)) {}

Catalog Catalog::open(const std::filesystem::path& root) { return Catalog(root, load_reference_data(root)); }

std::vector<std::string> Catalog::gpu_names() const { return stems(root_ / "gpus"); }
std::vector<std::string> Catalog::cluster_names() const { return stems(root_ / "clusters"); }

std::filesystem::path Catalog::catalog_file(std::string_view dir, std::string_view name) const {
  return root_ / dir / (std::string(name) + ".json");
}

GpuSpec Catalog::gpu(std::string_view name_or_path, const std::string& where) const {
  if (looks_like_path(name_or_path)) return load_gpu_file(std::filesystem::path(name_or_path), reference_);
  const std::filesystem::path file = catalog_file("gpus", name_or_path);
  if (!input_exists(file)) {
    throw InputError(where, fmt::format("\"{}\" is not in the GPU catalog {}", name_or_path, (root_ / "gpus").string()),
                     "a name from `commscale hw list` or a path to a GPU file");
  }
  GpuSpec gpu = load_gpu_file(file, reference_);
  check_catalog_name(gpu.name, file);
  return gpu;
}

ClusterSpec Catalog::cluster_from_file(const std::filesystem::path& file,
                                       const std::vector<Override>& overrides) const {
  return cluster_from_json(read_json_file(file), file, overrides);
}

ClusterSpec Catalog::cluster_from_json(const nlohmann::json& json, const std::filesystem::path& file,
                                       const std::vector<Override>& overrides) const {
  const std::filesystem::path dir = file.parent_path();
  // A cluster names its GPU from the catalog, or by a path relative to the cluster file.
  const GpuResolver resolve = [this, dir, &overrides](const std::string& ref, const std::string& where) {
    const bool has_gpu_overrides =
        std::any_of(overrides.begin(), overrides.end(), [](const Override& o) { return o.on_gpu(); });
    if (!has_gpu_overrides) return looks_like_path(ref) ? gpu((dir / ref).string(), where) : gpu(ref, where);
    const std::filesystem::path file = looks_like_path(ref) ? dir / ref : catalog_file("gpus", ref);
    if (!looks_like_path(ref)) (void)gpu(ref, where);  // the catalog's checks and messages for the name
    nlohmann::json doc = read_json_file(file);
    apply_gpu_overrides(doc, overrides);
    return parse_gpu(doc, file.string(), reference_);
  };
  if (overrides.empty()) return parse_cluster(json, file.string(), reference_, resolve);
  nlohmann::json patched = json;
  std::vector<DeviceCountChange> counts;
  try {
    apply_cluster_overrides(patched, overrides);
    counts = device_count_changes(json, patched);
    const std::optional<std::string> dropped = drop_removed_devices(patched, counts, overrides);
    ClusterSpec cluster = parse_cluster(patched, file.string(), reference_, resolve);
    if (dropped) cluster.what_if_notes.push_back(*dropped);
    return cluster;
  } catch (const InputError& e) {
    const std::string message = e.what();
    // set_path's own messages name the override already.
    if (message.rfind("--set ", 0) == 0 || message.rfind("--sweep ", 0) == 0) throw;
    const std::string name = json.is_object() && json.contains("name") && json["name"].is_string()
                                 ? json["name"].get<std::string>()
                                 : file.string();
    const std::string hint = grown_devices_hint(counts, name);
    if (!hint.empty()) throw InputError(overrides_text(overrides), fmt::format("{}; {}", message, hint));
    throw InputError(overrides_text(overrides), message);
  }
}

std::filesystem::path Catalog::cluster_file(std::string_view name_or_path, const std::string& where) const {
  if (looks_like_path(name_or_path)) return std::filesystem::path(name_or_path);
  const std::filesystem::path file = catalog_file("clusters", name_or_path);
  if (!input_exists(file)) {
    throw InputError(where, fmt::format("\"{}\" is not a cluster in {}", name_or_path, (root_ / "clusters").string()),
                     "a name from `commscale hw list` or a path to a cluster file");
  }
  return file;
}

ClusterSpec Catalog::cluster(std::string_view name_or_path, const std::string& where) const {
  return cluster(name_or_path, where, {});
}

ClusterSpec Catalog::cluster(std::string_view name_or_path, const std::string& where,
                             const std::vector<Override>& overrides) const {
  const std::filesystem::path file = cluster_file(name_or_path, where);
  ClusterSpec cluster = cluster_from_file(file, overrides);
  if (!looks_like_path(name_or_path)) check_catalog_name(cluster.name, file);
  return cluster;
}

std::variant<GpuSpec, ClusterSpec> Catalog::any(std::string_view name_or_path, const std::string& where) const {
  if (looks_like_path(name_or_path)) {
    const std::filesystem::path file(name_or_path);
    // Read once: the path may be a pipe (`hw show <(cat file.json)`).
    const nlohmann::json json = read_json_file(file);
    const std::string kind =
        json.is_object() && json.contains("kind") && json["kind"].is_string() ? json["kind"].get<std::string>() : "";
    if (kind == "gpu") return parse_gpu(json, file.string(), reference_);
    if (kind == "cluster") return cluster_from_json(json, file, {});
    throw InputError(fmt::format("{}: kind", file.string()),
                     kind.empty() ? "is missing" : fmt::format("is \"{}\"", excerpt(kind)), "\"gpu\" or \"cluster\"");
  }
  if (input_exists(catalog_file("gpus", name_or_path))) return gpu(name_or_path, where);
  if (input_exists(catalog_file("clusters", name_or_path))) return cluster(name_or_path, where);
  throw InputError(where, fmt::format("\"{}\" is neither a GPU nor a cluster in {}", name_or_path, root_.string()),
                   "a name from `commscale hw list` or a path to a topology file");
}

}  // namespace commscale::hw

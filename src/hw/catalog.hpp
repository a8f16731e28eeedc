#pragma once

// The topologies directory: reference data, the GPU catalog and the cluster files, looked up by
// name ("h200x2") or by path ("my/cluster.json"); anything that names a GPU or cluster accepts either.
//
//   topologies/sources.json        source keys -> citations
//   topologies/links.json          PCIe rate per generation, default latency per link type
//   topologies/gpus/NAME.json      one GPU each
//   topologies/clusters/NAME.json  one cluster (node + network) each

#include <filesystem>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "hw/cluster_spec.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/overrides.hpp"
#include "hw/reference.hpp"

namespace commscale::hw {

class Catalog {
 public:
  // Loads the reference data of `root` (GPU and cluster files are read when asked for). Throws
  // InputError naming the file and key of the first problem.
  [[nodiscard]] static Catalog open(const std::filesystem::path& root);

  [[nodiscard]] const std::filesystem::path& root() const noexcept { return root_; }
  [[nodiscard]] const ReferenceData& reference() const noexcept { return reference_; }

  // Names (file stems) of root/gpus/*.json and root/clusters/*.json, sorted.
  [[nodiscard]] std::vector<std::string> gpu_names() const;
  [[nodiscard]] std::vector<std::string> cluster_names() const;

  // A GPU or cluster by catalog name or by path; `where` names the flag or key it came from. A catalog
  // file's "name" must be its stem. Throws InputError.
  [[nodiscard]] GpuSpec gpu(std::string_view name_or_path, const std::string& where) const;
  [[nodiscard]] ClusterSpec cluster(std::string_view name_or_path, const std::string& where) const;
  // The same with what-if overrides (overrides.hpp) applied to the cluster's and its GPU's documents
  // before they are read; an error then names the --set as well as the file and key.
  [[nodiscard]] ClusterSpec cluster(std::string_view name_or_path, const std::string& where,
                                    const std::vector<Override>& overrides) const;

  // Either kind, for `hw show`: a name is looked up among GPUs, then clusters; a path by its "kind".
  [[nodiscard]] std::variant<GpuSpec, ClusterSpec> any(std::string_view name_or_path, const std::string& where) const;

 private:
  Catalog(std::filesystem::path root, ReferenceData reference);
  [[nodiscard]] std::filesystem::path catalog_file(std::string_view dir, std::string_view name) const;
  [[nodiscard]] ClusterSpec cluster_from_file(const std::filesystem::path& file,
                                              const std::vector<Override>& overrides) const;
  [[nodiscard]] ClusterSpec cluster_from_json(const nlohmann::json& json, const std::filesystem::path& file,
                                              const std::vector<Override>& overrides) const;
  [[nodiscard]] std::filesystem::path cluster_file(std::string_view name_or_path, const std::string& where) const;

  std::filesystem::path root_;
  ReferenceData reference_;
};

// A path rather than a catalog name: it has a directory separator or ends in ".json".
[[nodiscard]] bool looks_like_path(std::string_view name_or_path) noexcept;

}  // namespace commscale::hw

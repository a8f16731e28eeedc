#pragma once

// What `commscale hw list` and `commscale hw show` print: text tables and JSON views of the catalog.
// Pure functions of the loaded specs, so that they can be tested without the executable.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/cluster_spec.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/link_graph.hpp"

namespace commscale::hw {

// One line per GPU: rates, memory and links, each figure not from a vendor document marked with its tag.
[[nodiscard]] std::string format_gpu_list(const std::vector<GpuSpec>& gpus);
// One line per cluster: GPUs per node, the path between its first two GPUs, the network.
[[nodiscard]] std::string format_cluster_list(const std::vector<ClusterSpec>& clusters);

// Every figure of a GPU with its unit, tag and source.
[[nodiscard]] std::string format_gpu(const GpuSpec& gpu, const ReferenceData& ref);
// A cluster: devices, links with their derived bandwidths, paths from rank 0, the ring over all ranks.
[[nodiscard]] std::string format_cluster(const ClusterSpec& cluster, const LinkGraph& graph);

// JSON: the file form plus, for clusters, what the link graph derives ("derived").
[[nodiscard]] nlohmann::ordered_json list_json(const std::vector<GpuSpec>& gpus,
                                               const std::vector<ClusterSpec>& clusters);
[[nodiscard]] nlohmann::ordered_json cluster_show_json(const ClusterSpec& cluster, const LinkGraph& graph);
[[nodiscard]] nlohmann::ordered_json path_json(const LinkGraph& graph, const Path& path);

// The paths `hw show` reports: rank 0 to every other rank of node 0, and to the first rank of node 1.
[[nodiscard]] std::vector<Path> paths_from_rank0(const LinkGraph& graph);

}  // namespace commscale::hw

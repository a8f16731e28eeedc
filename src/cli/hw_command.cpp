// `commscale hw`: the GPU catalog and cluster topologies. Pure: no MPI, no GPU; it reads topologies/
// (found as hw/topology_dir.hpp says) and prints tables, or JSON with --json.

#include <iostream>
#include <memory>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "hw/catalog.hpp"
#include "hw/cluster_match.hpp"
#include "hw/json_reader.hpp"
#include "report/hw_describe.hpp"
#include "hw/link_graph.hpp"
#include "hw/topology_dir.hpp"

namespace commscale {
namespace {

struct HwArguments {
  std::string target;  // hw show: a name or a path
  bool json = false;
  int nodes = 1;
};

int run_hw_list(const HwArguments& a) {
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  std::vector<hw::GpuSpec> gpus;
  for (const std::string& name : catalog.gpu_names()) gpus.push_back(catalog.gpu(name, "hw list"));
  std::vector<hw::ClusterSpec> clusters;
  for (const std::string& name : catalog.cluster_names()) clusters.push_back(catalog.cluster(name, "hw list"));
  if (a.json) {
    std::cout << hw::list_json(gpus, clusters).dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format(
                   "GPUs ({}/gpus; tags: P vendor document, D derived, S secondary, U unverified, M measured; "
                   "untagged values are P)\n",
                   catalog.root().string())
            << hw::format_gpu_list(gpus) << "\n"
            << fmt::format("Clusters ({}/clusters; one node each, --nodes N for more where there is a network)\n",
                           catalog.root().string())
            << hw::format_cluster_list(clusters);
  return 0;
}

int run_hw_show(const HwArguments& a) {
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  const auto spec = catalog.any(a.target, "hw show");
  if (const auto* gpu = std::get_if<hw::GpuSpec>(&spec)) {
    if (a.nodes != 1)
      throw InputError("--nodes", fmt::format("{} is a GPU, not a cluster", a.target), "--nodes with a cluster");
    std::cout << (a.json ? hw::gpu_to_json(*gpu).dump(2) + "\n" : hw::format_gpu(*gpu, catalog.reference()));
    return 0;
  }
  const auto& cluster = std::get<hw::ClusterSpec>(spec);
  const hw::LinkGraph graph = hw::LinkGraph::build(cluster, a.nodes);
  std::cout << (a.json ? hw::cluster_show_json(cluster, graph).dump(2) + "\n" : hw::format_cluster(cluster, graph));
  return 0;
}

// The GPUs of a `commscale topo -J` file: each device's name and the catalog GPU topo matched.
std::vector<hw::DiscoveredName> topo_gpus(const std::string& file) {
  const nlohmann::json doc = hw::read_json_file(file);
  hw::JsonObject root(doc, file, "");
  if (const std::string kind = root.string("kind"); kind != "commscale-topo") {
    throw InputError(root.where("kind"), fmt::format("\"{}\"", kind),
                     "\"commscale-topo\" (a file of commscale topo -J)");
  }
  std::vector<hw::DiscoveredName> out;
  for (hw::JsonObject& g : root.objects("gpus")) {
    hw::DiscoveredName d{g.string("name"), std::nullopt};
    const nlohmann::json* catalog_gpu = g.optional("catalog_gpu");
    if (catalog_gpu != nullptr && !catalog_gpu->is_null())
      d.catalog_gpu = hw::expect_string(*catalog_gpu, g.where("catalog_gpu"));
    out.push_back(std::move(d));
  }
  return out;
}

// Prints the matching cluster's name alone (for scripts: launch/main.sh); exit 1 and why when none.
int run_hw_match(const HwArguments& a) {
  const std::vector<hw::DiscoveredName> gpus = topo_gpus(a.target);
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  const hw::ClusterMatch m = hw::match_cluster(catalog, gpus);
  if (!m.cluster) {
    std::cerr << fmt::format("commscale: no catalog cluster matches {}: {}\n", a.target, m.reason);
    return static_cast<int>(ExitCode::kCheckFailed);
  }
  std::cout << *m.cluster << "\n";
  if (!m.others.empty())
    std::cerr << fmt::format("commscale: {} also matches {}\n", fmt::join(m.others, ", "), a.target);
  return 0;
}

}  // namespace

void add_hw_command(CLI::App& app, CommandAction* action, const std::string& /*command_line*/) {
  auto args = std::make_shared<HwArguments>();
  CLI::App* hw =
      app.add_subcommand("hw", "The GPU catalog and cluster topologies (topologies/, or $COMMSCALE_TOPOLOGIES)");
  hw->require_subcommand(1);

  CLI::App* list = hw->add_subcommand("list", "List the GPUs and clusters of the catalog (and check every file)");
  list->add_flag("--json", args->json, "print JSON instead of tables");
  list->callback([args, action] { *action = [args] { return run_hw_list(*args); }; });

  CLI::App* show = hw->add_subcommand(
      "show", "Print one GPU or cluster, with what the link graph derives; checks a file given by path");
  show->add_option("name", args->target, "a catalog name (hw list) or a path to a GPU or cluster file")->required();
  show->add_flag("--json", args->json, "print JSON: the file's form, plus derived paths for a cluster");
  show->add_option("--nodes", args->nodes,
                   "nodes of a multi-node cluster (its file describes one node and the network)")
      ->capture_default_str();
  show->callback([args, action] { *action = [args] { return run_hw_show(*args); }; });

  CLI::App* match = hw->add_subcommand(
      "match", "The catalog cluster of the machine a `commscale topo -J` file describes: its name, or why none");
  match->add_option("topo", args->target, "a JSON file written by commscale topo -J")->required();
  match->callback([args, action] { *action = [args] { return run_hw_match(*args); }; });
}

}  // namespace commscale

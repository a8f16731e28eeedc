// `commscale topo`: discovers this machine from one process (no MPI), prints the GPU x GPU matrix as
// `nvidia-smi topo -m` does, and writes the machine as a topology file that the catalog loads.

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/option_rules.hpp"
#include "core/atomic_file.hpp"
#include "core/json_text.hpp"
#include "core/error.hpp"
#include "core/utf8.hpp"
#include "hw/catalog.hpp"
#include "hw/cluster_match.hpp"
#include "hw/topology_dir.hpp"
#include "report/topo_cluster.hpp"
#include "report/topo_reporters.hpp"
#include "runtime/discovery.hpp"
#include "runtime/local_context.hpp"

namespace commscale {
namespace {

struct TopoArguments {
  std::string devices;
  const CLI::Option* devices_given = nullptr;  // an empty --devices '' is an error, not "all"
  std::string output;
  std::string name;
  std::string gpu;
  std::string json_path;
  std::string csv_path;
  std::string command_line;
  std::vector<int> device_list;
};

void finish(TopoArguments& a) {
  if (a.devices_given->count() > 0) a.device_list = parse_device_list(a.devices, "--devices");
  check_outputs({{"-o/--output", a.output}, {"-J/--json", a.json_path}, {"--csv", a.csv_path}});
  if (!a.name.empty() && a.output.empty())
    throw InputError("--name", "names the topology file", "--output FILE with it");
  if (!a.gpu.empty() && a.output.empty())
    throw InputError("--gpu", "names the topology file's GPU", "--output FILE with it");
  // The topology file is JSON, which holds UTF-8 only: its name (by default the file's stem) and the
  // GPU it names are checked now, not once the machine has been described.
  if (a.output.empty()) return;
  const bool named = !a.name.empty();
  const std::string name = named ? a.name : std::filesystem::path(a.output).stem().string();
  if (escape_invalid_utf8(name) != name) {
    throw InputError(named ? "--name" : "-o/--output",
                     fmt::format("the topology's name \"{}\" is not UTF-8 text", name),
                     named ? "a name in UTF-8: the topology file is JSON"
                           : "--name NAME in UTF-8 (the name is the file's stem by default; the file is JSON)");
  }
  if (escape_invalid_utf8(a.gpu) != a.gpu) {
    throw InputError("--gpu", fmt::format("\"{}\" is not UTF-8 text", a.gpu),
                     "a GPU name or file path in UTF-8: the topology file (JSON) records it");
  }
}

// The GPU the file names: --gpu, else the catalog GPU the discovered name stands for. A path is
// written relative to the file, as the loader resolves it.
std::pair<std::string, hw::GpuSpec> file_gpu(const MachineDiscovery& m, const TopoArguments& a,
                                             const hw::Catalog& catalog) {
  if (!a.gpu.empty()) {
    hw::GpuSpec gpu = catalog.gpu(a.gpu, "--gpu");
    if (!hw::looks_like_path(a.gpu)) return {a.gpu, std::move(gpu)};
    const std::filesystem::path dir = std::filesystem::absolute(a.output).parent_path();
    return {std::filesystem::relative(std::filesystem::absolute(a.gpu), dir).string(), std::move(gpu)};
  }
  const DiscoveredGpu& first = m.gpus.front();
  if (first.catalog_gpu.empty()) {
    throw InputError("-o/--output",
                     fmt::format("the {} is not in the GPU catalog ({}), and a topology file must name a catalog GPU "
                                 "for its compute and link figures",
                                 first.name, (catalog.root() / "gpus").string()),
                     "--gpu NAME naming the catalog GPU it is, or --gpu FILE with a GPU file you wrote "
                     "(topologies/README.md)");
  }
  return {first.catalog_gpu, catalog.gpu(first.catalog_gpu, "topo")};
}

void write_topology(const MachineDiscovery& m, const TopoArguments& a, const hw::Catalog& catalog) {
  auto [gpu_ref, gpu] = file_gpu(m, a, catalog);
  const TopologyRequest request{a.name.empty() ? std::filesystem::path(a.output).stem().string() : a.name, a.output,
                                gpu_ref, gpu, utc_timestamp().substr(0, 10)};
  const nlohmann::ordered_json file = hw::cluster_to_json(cluster_from_discovery(m, request, catalog.reference()));
  // Loaded back as the catalog will load it, before anything is written.
  const std::filesystem::path dir = std::filesystem::absolute(a.output).parent_path();
  const hw::GpuResolver resolve = [&](const std::string& ref, const std::string& where) {
    return hw::looks_like_path(ref) ? catalog.gpu((dir / ref).string(), where) : catalog.gpu(ref, where);
  };
  (void)hw::parse_cluster(nlohmann::json::parse(file.dump()), a.output, catalog.reference(), resolve);
  write_file_atomically(a.output, json_text(file, 2));
  std::cout << fmt::format("\n# wrote {} (gpu {}); see it with: commscale hw show {}\n", a.output, gpu_ref, a.output);
}

// The catalog names the GPUs; topo describes the machine without it, but cannot write a file.
std::optional<hw::Catalog> open_catalog(std::string* why) {
  try {
    return hw::Catalog::open(hw::find_topologies_dir());
  } catch (const InputError& e) {
    *why = e.what();
    return std::nullopt;
  }
}

// The cluster of topologies/clusters/ that `hw match` finds for this machine (or why there is none).
std::string catalog_cluster(const MachineDiscovery& m, const hw::Catalog& catalog) {
  std::vector<hw::DiscoveredName> gpus;
  for (const DiscoveredGpu& g : m.gpus) {
    gpus.push_back({g.name, g.catalog_gpu.empty() ? std::nullopt : std::optional<std::string>(g.catalog_gpu)});
  }
  return hw::describe(hw::match_cluster(catalog, gpus));
}

int run_topo(const TopoArguments& a) {
  MachineDiscovery m = discover_machine(a.device_list);
  std::string no_catalog;
  const std::optional<hw::Catalog> catalog = m.gpus.empty() ? std::nullopt : open_catalog(&no_catalog);
  if (catalog) match_catalog_gpus(m, *catalog);
  const RunContext context = single_process_context(a.command_line, m);
  std::cout << format_topo_text(m, context);
  if (catalog) std::cout << fmt::format("# catalog cluster of this machine: {}\n", catalog_cluster(m, *catalog));
  std::cout << std::flush;
  if (!no_catalog.empty()) std::cout << fmt::format("# the GPU catalog could not be read: {}\n", no_catalog);
  if (!a.json_path.empty()) write_file_atomically(a.json_path, json_text(topo_json(m, context), 1));
  if (!a.csv_path.empty()) write_file_atomically(a.csv_path, topo_csv(m));
  if (a.output.empty()) return 0;
  if (m.gpus.empty()) {
    throw InputError("-o/--output", fmt::format("there is nothing to describe: {}", m.no_gpu_reason),
                     "a machine with a visible GPU");
  }
  if (!catalog) throw InputError("-o/--output", "the GPU catalog could not be read: " + no_catalog, "topologies/");
  write_topology(m, a, *catalog);
  return 0;
}

}  // namespace

std::vector<int> parse_device_list(const std::string& text, const std::string& where) {
  std::vector<int> devices;
  for (const std::string& item : split_list(text, where)) {
    int device = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), device);
    if (ec != std::errc() || end != item.data() + item.size() || device < 0) {
      throw InputError(where, fmt::format("\"{}\" is not a device number", item), "a comma list such as 0,1");
    }
    if (std::find(devices.begin(), devices.end(), device) != devices.end()) {
      throw InputError(where, fmt::format("device {} is listed twice", device), "each device once");
    }
    devices.push_back(device);
  }
  return devices;
}

void add_topo_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<TopoArguments>();
  args->command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "topo", "Discover this machine's GPUs and links (one process, no MPI); write it as a topology file");
  mark_output_file(
      cmd->add_option("-o,--output", args->output, "write the machine as a topology file (topologies/README.md)"));
  cmd->add_option("--name", args->name, "the topology's name (default: the --output file's stem)");
  mark_input_file(cmd->add_option("--gpu", args->gpu,
                                  "the catalog GPU (name or GPU file) the file names, when discovery cannot tell"));
  mark_output_file(cmd->add_option("-J,--json", args->json_path, "write the discovery as JSON to this file"));
  mark_output_file(cmd->add_option("--csv", args->csv_path, "write the GPU pairs as CSV to this file"));
  args->devices_given =
      cmd->add_option("--devices", args->devices, "CUDA devices to describe, a comma list (default: all visible)");
  cmd->callback([args, action] {
    finish(*args);
    *action = [args] { return run_topo(*args); };
  });
}

}  // namespace commscale

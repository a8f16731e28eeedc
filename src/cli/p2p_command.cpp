// `commscale p2p`: GPU x GPU and host <-> GPU copy bandwidth and latency from one process that drives
// every GPU (no MPI), as nvbandwidth measures them. Method: src/bench/P2P.md.

#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/p2p.hpp"
#include "cli/command.hpp"
#include "cli/number_options.hpp"
#include "cli/option_rules.hpp"
#include "core/atomic_file.hpp"
#include "core/json_text.hpp"
#include "core/error.hpp"
#include "core/size.hpp"
#include "hw/catalog.hpp"
#include "hw/topology_dir.hpp"
#include "report/p2p_line_rate.hpp"
#include "report/p2p_reporters.hpp"
#include "report/topo_cluster.hpp"
#include "runtime/discovery.hpp"
#include "runtime/local_context.hpp"

namespace commscale {
namespace {

struct P2pArguments {
  std::string devices;
  const CLI::Option* devices_given = nullptr;  // an empty --devices '' is an error, not "all"
  std::string size = "512M";
  std::string tests = "all";
  std::string command_line;
  P2pOptions options;
};

void parse_tests(const std::string& text, P2pOptions& o) {
  if (text == "all") return;
  o.copy_engine = o.sm = o.latency = o.host = false;
  for (const std::string& item : split_list(text, "--tests")) {
    bool* flag = item == "ce"        ? &o.copy_engine
                 : item == "sm"      ? &o.sm
                 : item == "latency" ? &o.latency
                 : item == "host"    ? &o.host
                                     : nullptr;
    if (flag == nullptr)
      throw InputError("--tests", fmt::format("unknown test \"{}\"", item),
                       "ce, sm, latency, host, a comma list, or all");
    *flag = true;
  }
}

void finish(P2pArguments& a) {
  P2pOptions& o = a.options;
  if (a.devices_given->count() > 0) o.devices = parse_device_list(a.devices, "--devices");
  o.size = parse_size(a.size, "-b/--size");
  if (o.size.count() == 0) throw InputError("-b/--size", "0 bytes", "at least 1 byte per copy");
  if (o.copies < 1) throw InputError("--copies", fmt::format("{} copies", o.copies), "at least 1 copy per sample");
  if (o.iters < 1) throw InputError("-n/--iters", fmt::format("{} samples", o.iters), "at least 1");
  if (o.warmup < 0) throw InputError("-w/--warmup", fmt::format("{} batches", o.warmup), "0 or more");
  if (o.latency_accesses < 1) {
    throw InputError("--latency-loads", fmt::format("{} loads", o.latency_accesses), "at least 1 load per sample");
  }
  // Bounded as bench's counts are: a sample is kept per timed batch, and INT_MAX copies never end.
  check_count(o.copies, 1, kMaxIterations, "--copies", "copies");
  check_count(o.iters, 1, kMaxIterations, "-n/--iters", "samples");
  check_count(o.warmup, 0, kMaxIterations, "-w/--warmup", "batches");
  check_count(o.latency_accesses, 1, 100 * kMaxIterations, "--latency-loads", "loads");
  parse_tests(a.tests, o);
  check_outputs({{"-J/--json", o.json_path}, {"--csv", o.csv_path}});
}

// Line rates come from the catalog; without it the bandwidths stand alone, and the report says why.
void add_line_rates(P2pReport& report, MachineDiscovery& m) {
  try {
    const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
    match_catalog_gpus(m, catalog);
    const std::string& name = m.gpus.front().catalog_gpu;
    const bool one_model =
        std::all_of(m.gpus.begin(), m.gpus.end(), [&](const DiscoveredGpu& g) { return g.catalog_gpu == name; });
    std::optional<hw::GpuSpec> gpu;
    if (!name.empty() && one_model) gpu = catalog.gpu(name, "p2p");
    if (!gpu) {
      report.notes.push_back(fmt::format("no catalog GPU for the {}: no NVLink line rate", m.gpus.front().name));
    }
    apply_line_rates(report, m, gpu ? &*gpu : nullptr, &catalog.reference());
  } catch (const InputError& e) {
    report.notes.push_back(fmt::format("no line rates: the catalog could not be read ({})", e.what()));
    apply_line_rates(report, m, nullptr, nullptr);
  }
}

int run_p2p_command(const P2pArguments& a) {
  MachineDiscovery m = discover_machine(a.options.devices);
  if (m.gpus.empty()) throw RuntimeFailure(fmt::format("p2p needs a GPU, and there is none: {}", m.no_gpu_reason));
  P2pReport report = run_p2p(a.options, m);
  report.context = single_process_context(a.command_line, m);
  add_line_rates(report, m);
  std::cout << format_p2p_text(report) << std::flush;
  if (!a.options.json_path.empty()) write_file_atomically(a.options.json_path, json_text(p2p_json(report), 1));
  if (!a.options.csv_path.empty()) write_file_atomically(a.options.csv_path, p2p_csv(report));
  return static_cast<int>(report.passed() ? ExitCode::kOk : ExitCode::kCheckFailed);
}

}  // namespace

void add_p2p_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<P2pArguments>();
  args->command_line = command_line;
  P2pOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "p2p", "GPU x GPU and host <-> GPU copy bandwidth and latency, from one process (no MPI); see src/bench/P2P.md");
  cmd->add_option("-b,--size", args->size, "bytes per bandwidth copy (K, M, G: powers of 1024)")->capture_default_str();
  cmd->add_option("--copies", o.copies, "copies per sample, queued behind the spin kernel")->capture_default_str();
  cmd->add_option("-n,--iters", o.iters, "timed samples per measurement")->capture_default_str();
  cmd->add_option("-w,--warmup", o.warmup, "untimed batches before the samples")->capture_default_str();
  cmd->add_option("--latency-loads", o.latency_accesses, "dependent loads per latency sample")->capture_default_str();
  cmd->add_option("--tests", args->tests, "ce, sm, latency, host (a comma list), or all")->capture_default_str();
  cmd->add_flag("--no-p2p", o.no_p2p, "measure every GPU pair over the staged path, as if P2P were unavailable");
  args->devices_given =
      cmd->add_option("--devices", args->devices, "CUDA devices to measure, a comma list (default: all visible)");
  cmd->add_flag("--inject-corruption", o.inject_corruption,
                "testing: overwrite each measurement's first copied buffer before it is checked (the run must fail)")
      ->group("Testing");
  mark_output_file(cmd->add_option("-J,--json", o.json_path, "write results as JSON to this file"));
  mark_output_file(cmd->add_option("--csv", o.csv_path, "write results as CSV to this file"));
  cmd->callback([args, action] {
    finish(*args);
    *action = [args] { return run_p2p_command(*args); };
  });
}

}  // namespace commscale

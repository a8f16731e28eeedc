// `commscale predict`: the step time of a model and plan on any cluster of the catalog (or a file),
// by event simulation of the step program against the cost models (src/predict/); or, with
// --collective, one collective's time over a size sweep (cli/predict_collective.hpp). Pure: no MPI, no
// GPU. Exit codes: 0 predicted (and the plan fits); 1 predicted, but the plan does not fit in the
// GPU's memory; 2 bad input.

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "cli/number_options.hpp"
#include "cli/option_rules.hpp"
#include "cli/predict_collective.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/predict_options.hpp"
#include "core/atomic_file.hpp"
#include "core/json_text.hpp"
#include "core/error.hpp"
#include "hw/topology_dir.hpp"
#include "parallel/program_size.hpp"
#include "predict/prediction.hpp"
#include "predict/what_if.hpp"
#include "report/chrome_trace.hpp"
#include "report/prediction_report.hpp"
#include "report/progress.hpp"

namespace commscale {
namespace {

struct PredictArguments {
  ModelPlanArguments model_plan;
  CollectiveArguments collective;
  std::vector<const CLI::Option*> step_only;  // flags --collective does not take
  std::string cluster;
  int nodes = 0;  // 0: as many as the plan needs
  const CLI::Option* nodes_flag = nullptr;
  std::vector<std::string> set;
  std::string calibration;
  std::string host_framework;
  double workspace_gib = 2.0;
  bool full_simulation = false;
  std::string timeline_path;
  std::string trace_path;
  OutputArguments output;
  std::string command_line;
};

// The simulated ranks as a Chrome trace, one process per simulated rank named by its world rank.
ChromeTrace trace_of(const ProgramSet& set, const predict::Simulation& sim,
                     const predict::SimAttribution& attribution) {
  const predict::ReducedRun run = predict::reduced_run(set, sim, &attribution);
  ChromeTrace trace = chrome_trace(run.set, run.timeline);
  for (TraceName& n : trace.names) {
    const auto i = static_cast<std::size_t>(n.pid);
    n.pid = sim.simulated.at(i);
    if (n.tid) continue;
    const int others = sim.class_size[i] - 1;
    n.name = others > 0 ? fmt::format("rank {} (and {} ranks like it)", n.pid, others) : fmt::format("rank {}", n.pid);
  }
  for (TraceOp& op : trace.ops) op.pid = sim.simulated.at(static_cast<std::size_t>(op.pid));
  return trace;
}

void write_extras(const PredictArguments& a, const PreparedStep& step, const predict::Prediction& p) {
  if (!a.timeline_path.empty()) {
    nlohmann::json doc = predict::full_timeline(step.program, *p.simulation, &p.attribution);
    doc["schema_version"] = 1;
    doc["kind"] = "commscale-timeline";
    write_file_atomically(a.timeline_path, json_text(doc));
  }
  if (!a.trace_path.empty()) {
    const ChromeTrace trace = trace_of(step.program, *p.simulation, p.attribution);
    write_file_atomically(a.trace_path, json_text(nlohmann::json(trace)));
  }
}

int run_predict(PredictArguments& a) {
  merge_plan_file(a.model_plan);
  merge_plan_file_cluster(a.model_plan, &a.cluster, &a.nodes, &a.set);
  if (a.cluster.empty()) throw InputError("--cluster", "missing", "a cluster, or a --plan-file with one");
  const std::vector<hw::Override> overrides = hw::parse_overrides(a.set, "--set");
  CheckedPlan mp = finish_model_plan_options(a.model_plan);
  check_program_size(mp.plan());  // before the cluster's link graph, which takes long for many nodes
  finish_output_options(a.output, {{"--timeline", a.timeline_path}, {"--trace", a.trace_path}});
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  const hw::ClusterSpec cluster = catalog.cluster(a.cluster, "--cluster", overrides);
  std::vector<std::string> gpu_notes;
  mp = fit_plan_to_gpu(mp, a.model_plan, cluster.gpu, &gpu_notes);
  check_nodes_option(a.nodes_flag, a.nodes);
  const int nodes = a.nodes > 0 ? a.nodes : predict::nodes_for(cluster, mp.world(), "--world");
  const auto calibration = load_calibration_option(a.calibration, catalog);
  predict::Target target =
      predict::make_target(catalog, cluster, nodes, calibration,
                           resolve_host_framework(a.host_framework, mp.plan().framework, mp.plan().kernels,
                                                  calibration.get()));
  target.notes.insert(target.notes.begin(), gpu_notes.begin(), gpu_notes.end());
  const std::vector<std::string> warnings =
      predict::unused_override_warnings(overrides, "this prediction", cluster.name, nodes);
  MemoryOptions memory;
  memory.workspace = gib_to_bytes(a.workspace_gib);
  predict::PredictOptions options;
  options.reduce = !a.full_simulation;
  options.keep_simulation = !a.timeline_path.empty() || !a.trace_path.empty();
  // Large worlds take seconds to minutes (program build, deadlock check, simulation): say what runs.
  Progress progress(progress_enabled(false) ? &std::cerr : nullptr, "predict", 0);
  progress.update(0, fmt::format("{} ranks on {} nodes of {}: building, checking and simulating the step", mp.world(),
                                 nodes, cluster.name));
  const PreparedStep step = predict::prepare_for(mp, target, memory);
  const predict::Prediction p = predict::predict_step(step, target, options);
  progress.finish();
  nlohmann::json doc = predict::prediction_to_json(p);
  doc["command_line"] = a.command_line;
  doc["context"] = inputs_context(a.model_plan, overrides);
  doc["warnings"] = warnings;
  if (emit_json(a.output, doc)) {
    std::cout << inputs_line(a.model_plan, overrides);
    for (const std::string& w : warnings) std::cout << "warning  " << w << "\n";
    predict::print_prediction(std::cout, p);
  }
  write_extras(a, step, p);
  return static_cast<int>(p.fit.fits ? ExitCode::kOk : ExitCode::kCheckFailed);
}

}  // namespace

void add_predict_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<PredictArguments>();
  args->command_line = command_line;
  CLI::App* cmd =
      app.add_subcommand("predict",
                         "Predict a training step of a model and plan on a cluster: step time, tokens/s, MFU, compute, "
                         "exposed communication by group and link, bubble, memory per rank (no GPU needed)");
  add_model_plan_options(*cmd, &args->model_plan);
  add_collective_options(*cmd, &args->collective);
  mark_input_file(cmd->add_option("--cluster", args->cluster,
                                  "a cluster of topologies/clusters (commscale hw list) or a cluster file (required "
                                  "unless the --plan-file has one)"));
  add_set_option(*cmd, &args->set);
  args->nodes_flag =
      cmd->add_option("--nodes", args->nodes, "nodes of the cluster (default: as many as the plan's ranks need)");
  mark_input_file(
      cmd->add_option("--calibration", args->calibration, "a calibration profile (commscale calibrate) to use"));
  args->step_only = {
      add_host_framework_option(*cmd, &args->host_framework),
      add_real_option(*cmd, "--workspace-gib", &args->workspace_gib,
                      "memory allowance per rank for the CUDA context, cuBLAS and NCCL buffers and fragmentation",
                      workspace_gib_range())
          ->capture_default_str(),
      cmd->add_flag("--full-simulation", args->full_simulation,
                    "simulate every rank, not one per symmetry class (same result, slower)"),
      mark_output_file(cmd->add_option("--timeline", args->timeline_path,
                                       "write the predicted timeline (train's schema) to this file")),
      mark_output_file(cmd->add_option("--trace", args->trace_path,
                                       "write a Chrome trace (opens in Perfetto) of the simulated ranks")),
  };
  add_output_options(*cmd, &args->output);
  cmd->callback([args, action, cmd] {
    check_predict_mode(args->collective, *cmd, args->step_only);
    if (args->collective.collectives.empty()) {
      *action = [args] { return run_predict(*args); };
      return;
    }
    *action = [args] {
      if (args->cluster.empty()) throw InputError("--cluster", "missing", "a cluster to predict the collective on");
      return run_predict_collective(args->collective, {args->cluster, args->nodes, args->calibration, args->set,
                                                       args->output, args->command_line});
    };
  });
}

}  // namespace commscale

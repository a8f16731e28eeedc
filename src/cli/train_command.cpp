// `commscale train`: runs a model's training step under a parallel plan for real on every rank, and
// reports compute against communication (text; JSON with -J; CSV; a Chrome trace; the timeline).

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "cli/option_rules.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/number_options.hpp"
#include "cli/predict_options.hpp"
#include "cli/reliability_options.hpp"
#include "core/atomic_file.hpp"
#include "core/json_text.hpp"
#include "core/jsonl_file.hpp"
#include "hw/catalog.hpp"
#include "hw/gpu_match.hpp"
#include "hw/topology_dir.hpp"
#include "predict/host_catalog.hpp"
#include "report/chrome_trace.hpp"
#include "report/progress.hpp"
#include "report/train_report.hpp"
#include "runtime/executor.hpp"
#include "workload/flops.hpp"
#include "workload/model_spec.hpp"

namespace commscale {
namespace {

constexpr int kMaxSteps = 10000;

struct TrainArguments {
  ModelPlanArguments model_plan;
  RuntimeOptions runtime;
  std::string backend = "auto";
  std::string timing = "op";
  double timeout_s = 0.0;
  double workspace_gib = 2.0;
  std::string gpu;  // catalog GPU for the MFU peak; empty: from the device name
  std::string json_path;
  std::string csv_path;
  std::string trace_path;
  std::string timeline_path;
  bool quiet = false;
  bool progress = false;
  std::string jsonl_path;
  std::string host_framework;  // --host-framework: issue ops at this framework's host costs
  std::string calibration;     // --calibration: where its costs come from, before the catalog
  ReliabilityArguments reliability;
  TrainOptions options;
  std::optional<CheckedPlan> resolved;
};

// --host-framework NAME [--calibration FILE]: the framework's host costs, from the profile's `host` row,
// else the catalog's (predict/host_catalog.hpp).
void finish_host_framework(TrainArguments& a) {
  if (a.host_framework.empty()) {
    if (!a.calibration.empty()) {
      throw InputError("--calibration", "is given without --host-framework",
                       "--host-framework NAME: train reads only the host costs of a profile");
    }
    return;
  }
  std::shared_ptr<const predict::CalibrationProfile> profile;
  if (!a.calibration.empty()) {
    profile = load_calibration_option(a.calibration, hw::Catalog::open(hw::find_topologies_dir()));
  }
  a.options.host = predict::host_costs_for(a.host_framework, profile.get(), "--host-framework");
}

void finish(TrainArguments& a) {
  merge_plan_file(a.model_plan);
  // train runs on this machine: a plan file's cluster and what-if overrides are for predict.
  if (reports_usage_errors() && a.model_plan.loaded_plan &&
      (!a.model_plan.loaded_plan->cluster.empty() || !a.model_plan.loaded_plan->set.empty())) {
    std::cerr << fmt::format("commscale train: note: the plan file's cluster and --set items are not used (train "
                             "measures this machine)\n");
  }
  if (!a.model_plan.framework.empty() && a.model_plan.framework != name(Framework::kCommscale)) {
    throw InputError("--framework", fmt::format("{} given to train", a.model_plan.framework),
                     "commscale (train runs commscale's own executor; --host-framework issues its ops at another "
                     "framework's host costs, --kernels eager runs eager PyTorch's kernel list)");
  }
  a.resolved = finish_model_plan_options(a.model_plan);
  finish_runtime_options(&a.runtime, a.backend);
  TrainOptions& o = a.options;
  if (a.timing == "op") {
    o.timing = TrainTiming::kPerOp;
  } else if (a.timing == "step") {
    o.timing = TrainTiming::kStepOnly;
  } else if (a.timing == "both") {
    o.timing = TrainTiming::kBoth;
  } else {
    throw InputError("--timing", fmt::format("\"{}\"", a.timing), "op, step or both");
  }
  if (o.steps < 1) throw InputError("--steps", fmt::format("{}", o.steps), "at least 1");
  if (o.warmup_steps < 0) throw InputError("--warmup", fmt::format("{}", o.warmup_steps), "0 or more");
  // Every timed step's timeline is kept (an event per op and rank), so their number is bounded.
  for (const auto& [steps, flag] : {std::pair{o.steps, "--steps"}, std::pair{o.warmup_steps, "--warmup"}}) {
    if (steps > kMaxSteps) throw InputError(flag, fmt::format("{}", steps), fmt::format("at most {}", kMaxSteps));
  }
  o.timeout = Seconds(a.timeout_s);
  a.runtime.timeout = o.timeout;
  a.jsonl_path = resolve_jsonl_path(a.reliability, a.json_path);
  if (launched_as_rank_zero()) {
    check_outputs({{"-J/--output_file", a.json_path}, {"--csv", a.csv_path}, {"--trace", a.trace_path},
                   {"--timeline", a.timeline_path}, {jsonl_flag(a.reliability), a.jsonl_path}});
  }
  if (!a.reliability.skip.empty()) o.skip = parse_collective_skip(a.reliability.skip, "--debug-skip-collective");
  finish_host_framework(a);
  // The MFU's peak is looked up after the steps: a --gpu the catalog does not know is refused now, before
  // anything runs or the JSON Lines file replaces an earlier run's.
  if (!a.gpu.empty()) (void)hw::Catalog::open(hw::find_topologies_dir()).gpu(a.gpu, "--gpu");
}

hw::MathRate rate_for(DataType type, bool tf32) {
  switch (type) {
    case DataType::kBFloat16: return hw::MathRate::kBf16Fp32Acc;
    case DataType::kFloat16: return hw::MathRate::kFp16Fp32Acc;
    case DataType::kFloat64: return hw::MathRate::kFp64Tensor;
    default: return tf32 ? hw::MathRate::kTf32Tensor : hw::MathRate::kFp32;
  }
}

// The catalog GPU and its peak for the step's type: --gpu, else the device's name; none on the CPU.
void set_peak(const TrainArguments& a, const RunContext& context, TrainReport* report, StepSummaryInputs* inputs) {
  if (context.backend != "gpu" && a.gpu.empty()) return;
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  std::string name = a.gpu;
  if (name.empty()) {
    const std::optional<std::string> match = hw::match_gpu_name(context.ranks.front().gpu_name, catalog.gpu_names());
    if (!match) return;
    name = *match;
  }
  const hw::GpuSpec gpu = catalog.gpu(name, "--gpu");
  const hw::MathRate rate = rate_for(a.resolved->model().dtype, a.options.tf32);
  const auto& figure = gpu.rate(rate);
  if (!figure.value) return;
  report->gpu = gpu.name;
  report->math = std::string(hw::rate_key(rate));
  report->peak_tflops = figure.value->value() / 1e12;
  inputs->peak = *figure.value;
}

// Rank 0's JSON Lines: a header now, a line per timed step as it completes (the observer), the summary
// at the end.
std::unique_ptr<JsonLinesFile> start_train_lines(const TrainArguments& a, const RunContext& context) {
  auto lines = std::make_unique<JsonLinesFile>(a.jsonl_path);
  lines->append({{"record", "header"},
                 {"kind", "commscale-train"},
                 {"schema_version", kTrainSchemaVersion},
                 {"context", context},
                 {"model", model_to_json(a.resolved->model())},
                 {"plan", plan_to_json(a.resolved->plan())},
                 {"config",
                  {{"warmup_steps", a.options.warmup_steps}, {"steps", a.options.steps}, {"timing", a.timing}}}});
  return lines;
}

StepObserver step_lines(JsonLinesFile* lines) {
  if (lines == nullptr) return {};
  return [lines](const TimedStep& s) {
    lines->append({{"record", "step"},
                   {"step", s.index},
                   {"timing", s.timing},
                   {"step_time_s", s.step_s},
                   {"rank_step_time_s", s.rank_step_s}});
  };
}

int run_train(const TrainArguments& a, const MpiComm& world) {
  if (a.options.skip) check_testing_rank(world, a.options.skip->rank, "--debug-skip-collective", a.reliability.skip);
  const RankSession session = start_rank_session(a.runtime, world);
  const CheckedPlan& mp = *a.resolved;
  TrainOptions options = a.options;
  std::unique_ptr<Progress> progress;
  if (world.rank() == 0 && progress_enabled(a.quiet, a.progress)) {
    progress = std::make_unique<Progress>(&std::cerr, "train steps", 0);
    options.on_step = [&progress](int done, int total) {
      progress->set_total(static_cast<std::size_t>(total));
      progress->update(static_cast<std::size_t>(done));
    };
  }
  check_plan_matches_world(mp.plan(), world);  // before the JSON Lines file replaces an earlier run's
  MemoryOptions memory;
  memory.workspace = gib_to_bytes(a.workspace_gib);
  const PreparedStep step = prepare_step(mp, memory, std::nullopt);
  std::unique_ptr<JsonLinesFile> lines;
  if (world.rank() == 0 && !a.jsonl_path.empty()) lines = start_train_lines(a, session.context);
  const TrainRun run = run_training(step, options, *session.backend, world, step_lines(lines.get()));
  if (progress) progress->finish();
  if (world.rank() != 0) return 0;

  StepSummaryInputs inputs;
  inputs.set = &step.program;
  inputs.timeline = &run.timeline;
  inputs.step_s = run.step_s;
  inputs.step_only_s = run.step_only_s;
  inputs.model_flops = model_flops(mp.model(), mp.plan().lora, mp.plan().global_batch);
  inputs.hardware_flops = step.summary.hardware_flops_per_step;
  inputs.tokens_per_step = static_cast<double>(mp.plan().global_batch) * static_cast<double>(mp.model().seq);
  TrainReport report;
  set_peak(a, session.context, &report, &inputs);
  report.context = session.context;
  report.model = mp.model();
  report.plan = mp.plan();
  report.summary = summarize_steps(inputs);
  report.method = run.method;
  report.timing = a.timing;
  report.warmup_steps = a.options.warmup_steps;
  report.steps = a.options.steps;
  report.pool = run.pool;
  report.modelled = run.modelled;
  report.step_s = run.step_s;
  report.step_only_s = run.step_only_s;
  report.gemm_checks = run.gemm_checks;
  report.comm_rates = comm_rates(step.program, run.timeline);
  if (!a.host_framework.empty()) report.host = a.options.host;

  print_train_text(std::cout, report);
  if (!a.json_path.empty()) write_file_atomically(a.json_path, json_text(train_json(report), 1));
  if (!a.csv_path.empty()) write_file_atomically(a.csv_path, train_csv(report));
  if (!a.trace_path.empty()) write_file_atomically(a.trace_path, json_text(nlohmann::json(chrome_trace(step.program, run.timeline))));
  if (!a.timeline_path.empty()) write_file_atomically(a.timeline_path, json_text(nlohmann::json(run.timeline)));
  if (lines) {
    lines->append({{"record", "summary"}, {"summary", report.summary}});
    lines->flush_to_disk();
  }
  return 0;
}

}  // namespace

void add_train_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<TrainArguments>();
  args->runtime.command_line = command_line;
  CLI::App* cmd = app.add_subcommand("train", "Run a training step of a model under a parallel plan, for real, on every "
                                              "rank, and report compute against communication");
  add_model_plan_options(*cmd, &args->model_plan);
  args->model_plan.default_framework = Framework::kCommscale;  // train runs commscale's own executor
  TrainOptions& o = args->options;
  cmd->add_option("--steps", o.steps, "timed steps")->capture_default_str();
  cmd->add_option("--warmup", o.warmup_steps, "untimed steps first")->capture_default_str();
  cmd->add_option("--timing", args->timing,
                  "op: time every op (timeline, breakdown); step: whole steps only; both: alternate, to show what "
                  "per-op timing costs")
      ->capture_default_str();
  cmd->add_flag("--gemm-check", o.gemm_check,
                "after the steps, time each of rank 0's GEMM shapes alone and compare with its time inside the step");
  cmd->add_flag("--tf32", o.tf32, "fp32 GEMMs on TF32 tensor cores (as torch.backends.cuda.matmul.allow_tf32)");
  add_real_option(*cmd, "--workspace-gib", &args->workspace_gib,
                  "the memory model's allowance for the CUDA context, cuBLAS and NCCL (not allocated by commscale)",
                  workspace_gib_range())
      ->capture_default_str();
  mark_input_file(cmd->add_option("--gpu", args->gpu,
                                  "catalog GPU (name or GPU file) whose peak the MFU refers to (default: the "
                                  "device's own name)"));
  cmd->add_option("--host-framework", args->host_framework,
                  "issue every op at this framework's host cost per op (the larger of it and commscale's own), "
                  "with its per-step cost and synchronisation: pytorch-eager, megatron, ... from --calibration's "
                  "`host` rows, else topologies/frameworks.json; none: as fast as commscale issues");
  mark_input_file(cmd->add_option("--calibration", args->calibration,
                                  "a calibration profile whose `host` row of --host-framework's framework is used"));
  add_real_option(*cmd, "-T,--timeout", &args->timeout_s, "seconds a step may take before the job is aborted (0: none)",
                  timeout_s_range())
      ->capture_default_str();
  mark_output_file(cmd->add_option("-J,--output_file", args->json_path, "write the results as JSON to this file"));
  mark_output_file(cmd->add_option("--csv", args->csv_path, "write one line per step and rank as CSV to this file"));
  mark_output_file(
      cmd->add_option("--trace", args->trace_path, "write a Chrome trace (opens in Perfetto) of the timed steps"));
  mark_output_file(cmd->add_option("--timeline", args->timeline_path,
                                   "write the timeline (the schema `predict` writes) to this file"));
  cmd->add_flag("-q,--quiet", args->quiet, "no progress line on stderr (shown only when stderr is a terminal)");
  cmd->add_flag("--progress", args->progress,
                "draw the progress line even when stderr is not a terminal (under mpirun it is a pipe)");
  add_reliability_options(*cmd, &args->reliability, "a line per timed step");
  add_runtime_options(*cmd, &args->runtime, &args->backend);
  cmd->callback([args, action] {
    finish(*args);
    *action = [args] { return run_on_all_ranks([&](const MpiComm& world) { return run_train(*args, world); }); };
  });
}

}  // namespace commscale

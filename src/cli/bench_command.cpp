// `commscale bench`: collective sweeps as nccl-tests runs them, on every rank of the job.

#include <charconv>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "bench/sweep.hpp"
#include "cli/command.hpp"
#include "cli/number_options.hpp"
#include "cli/option_rules.hpp"
#include "cli/reliability_options.hpp"
#include "cli/traffic_options.hpp"
#include "core/atomic_file.hpp"
#include "core/size.hpp"
#include "report/bench_reporters.hpp"
#include "report/progress.hpp"

namespace commscale {
namespace {

// The command line as typed, before it is checked and turned into BenchOptions.
struct BenchArguments {
  std::vector<std::string> collectives = {"all_reduce"};
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
  std::string step_bytes = "1M";
  std::int64_t step_factor = 1;  // signed, so that -f -1 is refused rather than wrapped
  std::string types = "fp32";
  std::string ops = "sum";
  std::string roots = "0";
  int blocking = 0;
  int average = 1;
  std::string split = "none";
  double min_busbw = -1.0;
  double timeout_s = 0.0;
  int corrupt_rank = -1;
  bool quiet = false;
  bool progress = false;
  std::string backend = "auto";
  std::string matrix;   // alltoallv's traffic matrix file
  std::string routing;  // or its routing
  ReliabilityArguments reliability;
  BenchOptions options;
  RuntimeOptions runtime;
};

template <class T, class Parse, class All>
std::vector<T> parse_choices(const std::string& text, const std::string& where, Parse parse, All all) {
  if (text == "all") return std::vector<T>(all.begin(), all.end());
  std::vector<T> out;
  for (const std::string& item : split_list(text, where)) out.push_back(parse(item, where));
  return out;
}

int parse_int(const std::string& text, const std::string& where, const std::string& expected) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw InputError(where, fmt::format("\"{}\" is not a number", text), expected);
  }
  return value;
}

Split parse_split(const std::string& text) {
  if (text == "none") return {};
  const std::size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  Split split;
  if (kind == "consecutive" || kind == "tp") {
    split.kind = SplitKind::kConsecutive;
  } else if (kind == "strided" || kind == "dp") {
    split.kind = SplitKind::kStrided;
  } else {
    throw InputError("--split", fmt::format("unknown split \"{}\"", text),
                     "none, consecutive:K (or tp:K) or strided:K (or dp:K), K ranks per group");
  }
  const std::string size = colon == std::string::npos ? "" : text.substr(colon + 1);
  split.group_size = parse_int(size, "--split", "a group size after the colon, e.g. consecutive:4");
  if (split.group_size < 1) throw InputError("--split", "the group size must be at least 1", "consecutive:K with K >= 1");
  return split;
}

// Checks the arguments and fills BenchOptions. Everything here is pure: it runs before MPI starts,
// so a mistake is reported once, with exit code 2, and nothing is launched.
void finish(BenchArguments& a) {
  BenchOptions& o = a.options;
  o.collectives.clear();
  for (const std::string& text : a.collectives) {
    if (text == "all") {
      o.collectives.assign(all_collectives().begin(), all_collectives().end());
    } else {
      o.collectives.push_back(parse_collective(text, "collective"));
    }
  }
  TrafficFlags traffic = parse_traffic_flags(a.matrix, a.routing, o.collectives, "bench alltoallv");
  o.matrix = std::move(traffic.matrix);
  o.routing = std::move(traffic.routing);
  if (a.step_factor < 1) throw InputError("-f/--stepfactor", fmt::format("{}", a.step_factor), "1 or more");
  o.sizes = size_sweep(parse_size(a.min_bytes, "-b/--minbytes"), parse_size(a.max_bytes, "-e/--maxbytes"),
                       static_cast<std::uint64_t>(a.step_factor), parse_size(a.step_bytes, "-i/--stepbytes"));
  o.types = parse_choices<DataType>(a.types, "-d/--datatype", parse_data_type, all_data_types());
  o.ops = parse_choices<ReduceOp>(a.ops, "-o/--op", parse_reduce_op, all_reduce_ops());
  o.all_roots = a.roots == "all";
  if (!o.all_roots) {
    o.roots.clear();
    for (const std::string& item : split_list(a.roots, "-r/--root")) {
      const int root = parse_int(item, "-r/--root", "a rank number or all");
      if (root < 0) throw InputError("-r/--root", fmt::format("{} is not a rank", root), "a rank number or all");
      o.roots.push_back(root);
    }
  }
  // Samples are kept (iters per rank, gathered on rank 0), so their number is bounded; warm-up and
  // checked iterations keep nothing, and the bound keeps a run's length sane.
  check_count(o.iters, 1, kMaxIterations, "-n/--iters", "iterations");
  check_count(o.warmup, 0, kMaxIterations, "-w/--warmup_iters", "iterations");
  check_count(o.check_iters, 0, kMaxIterations, "-c/--check", "iterations");
  if (a.blocking < 0 || a.blocking > 2) throw InputError("-z/--blocking", fmt::format("{}", a.blocking), "0, 1 or 2");
  o.blocking = static_cast<Blocking>(a.blocking);
  check_count(o.graph_launches, 0, kMaxIterations, "-G/--cudagraph", "replays");
  if (o.graph_launches > 0 && o.blocking != Blocking::kNone) {
    throw InputError("-G/--cudagraph", "graph replay cannot wait between iterations", "-z 0 with -G");
  }
  if (a.average < 0 || a.average > 3) throw InputError("-a/--average", fmt::format("{}", a.average), "0, 1, 2 or 3");
  o.combine = static_cast<RankCombine>(a.average);
  o.split = parse_split(a.split);
  if (a.min_busbw >= 0) o.min_busbw_GBps = a.min_busbw;
  o.timeout = Seconds(a.timeout_s);
  a.runtime.timeout = o.timeout;
  o.jsonl_path = resolve_jsonl_path(a.reliability, o.json_path);
  if (launched_as_rank_zero()) {  // only rank 0 writes result files
    check_outputs(
        {{"-J/--output_file", o.json_path}, {jsonl_flag(a.reliability), o.jsonl_path}, {"--csv", o.csv_path}});
  }
  if (a.corrupt_rank >= 0) o.corrupt_rank = a.corrupt_rank;
  if (o.corrupt_rank && o.check_iters == 0) {
    throw InputError("--inject-corruption", "corrupts the input of checked iterations, and -c 0 runs none",
                     "-c 1 or more with --inject-corruption");
  }
  if (!a.reliability.skip.empty()) o.skip = parse_collective_skip(a.reliability.skip, "--debug-skip-collective");
  finish_runtime_options(&a.runtime, a.backend);
  if (a.runtime.backend == BackendChoice::kCpu && o.graph_launches > 0) {
    throw InputError("-G/--cudagraph", "graph capture needs the GPU backend", "-G 0 with --backend cpu");
  }
}

int run_bench(const BenchArguments& a, const MpiComm& world) {
  if (a.options.corrupt_rank) {
    check_testing_rank(world, *a.options.corrupt_rank, "--inject-corruption", std::to_string(a.corrupt_rank));
  }
  if (a.options.skip) check_testing_rank(world, a.options.skip->rank, "--debug-skip-collective", a.reliability.skip);
  const RankSession session = start_rank_session(a.runtime, world);
  if (a.options.graph_launches > 0 && session.backend->kind() != "gpu") {
    fail_on_all_ranks(world, InputError("-G/--cudagraph", "graph capture needs the GPU backend, and none is in use",
                                        "-G 0 on the CPU backend"));
  }
  const std::unique_ptr<Communicator> all = session.backend->world();
  CollectiveSweep sweep(a.options, *session.backend, *all, world);

  BenchReporterList reporters;
  const bool reporting = world.rank() == 0;
  if (reporting) {
    reporters.add(make_text_bench_reporter(std::cout));
    if (!a.options.json_path.empty()) reporters.add(make_json_bench_reporter(a.options.json_path));
    if (!a.options.jsonl_path.empty()) reporters.add(make_jsonl_bench_reporter(a.options.jsonl_path));
    if (!a.options.csv_path.empty()) reporters.add(make_csv_bench_reporter(a.options.csv_path));
    if (progress_enabled(a.quiet, a.progress)) reporters.add(make_progress_bench_reporter(&std::cerr, sweep.row_count()));
    reporters.begin(sweep.setup(session.context));
  }
  const BenchSummary summary = sweep.run(reporting ? &reporters : nullptr);
  if (reporting) reporters.end(summary);
  return static_cast<int>(summary.passed() ? ExitCode::kOk : ExitCode::kCheckFailed);
}

}  // namespace

void add_bench_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<BenchArguments>();
  args->runtime.command_line = command_line;
  CLI::App* cmd = app.add_subcommand("bench", "Collective benchmark sweeps, as nccl-tests runs them, on every rank");
  BenchOptions& o = args->options;
  cmd->add_option("collective", args->collectives,
                  "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, alltoallv, sendrecv, or all "
                  "(all: every one but alltoallv, as nccl-tests' binaries)")
      ->capture_default_str();
  cmd->add_option("-b,--minbytes", args->min_bytes, "smallest size (K, M, G: powers of 1024)")->capture_default_str();
  cmd->add_option("-e,--maxbytes", args->max_bytes, "largest size")->capture_default_str();
  cmd->add_option("-i,--stepbytes", args->step_bytes, "fixed step between sizes, when -f is 1")->capture_default_str();
  cmd->add_option("-f,--stepfactor", args->step_factor, "multiply the size by this between steps")->capture_default_str();
  cmd->add_option("-n,--iters", o.iters, "timed iterations per size")->capture_default_str();
  cmd->add_option("-w,--warmup_iters", o.warmup, "untimed iterations per size")->capture_default_str();
  cmd->add_option("-d,--datatype", args->types, "int8, int32, fp16, bf16, fp32, fp64, a comma list, or all")
      ->capture_default_str();
  cmd->add_option("-o,--op", args->ops, "sum, prod, max, min, avg, a comma list, or all")->capture_default_str();
  cmd->add_option("-r,--root", args->roots, "root rank of broadcast and reduce, a comma list, or all")
      ->capture_default_str();
  cmd->add_option("-c,--check", o.check_iters, "checked iterations per size on fresh data (0: no check)")
      ->capture_default_str();
  cmd->add_option("-z,--blocking", args->blocking, "0: back to back; 1: wait and barrier after each; 2: wait after each")
      ->capture_default_str();
  cmd->add_option("-G,--cudagraph", o.graph_launches, "capture the iterations in a CUDA graph, replay it N times")
      ->capture_default_str();
  cmd->add_option("-a,--average", args->average, "combine ranks' times: 0 rank 0, 1 mean, 2 min, 3 max")
      ->capture_default_str();
  add_real_option(*cmd, "-T,--timeout", &args->timeout_s,
                  "seconds an operation may take before the job is aborted (0: none)", timeout_s_range())
      ->capture_default_str();
  mark_output_file(cmd->add_option("-J,--output_file", o.json_path, "write results as JSON to this file"));
  mark_output_file(cmd->add_option("--csv", o.csv_path, "write results as CSV to this file"));
  add_real_option(*cmd, "--min-busbw", &args->min_busbw,
                  "fail (exit 1) when the average bus bandwidth is below this, GB/s",
                  {0.0, 1e12, "0 to 1e12 GB/s", "", false});
  cmd->add_option("--split", args->split,
                  "run disjoint groups concurrently: consecutive:K (tp:K) groups K neighbouring ranks, "
                  "strided:K (dp:K) takes every (N/K)-th rank")
      ->capture_default_str();
  cmd->add_option("--matrix", args->matrix,
                  "alltoallv: traffic matrix file, row i = what rank i sends each rank (relative; scaled so that "
                  "the mean rank sends the size): whitespace text or JSON [[...]]");
  cmd->add_option("--routing", args->routing,
                  "alltoallv: traffic of a MoE router, experts=E,top-k=K[,imbalance=F|gini=G]"
                  "[,groups=N,group-top-k=M][,tokens=T][,seed=S]");
  cmd->add_flag("-q,--quiet", args->quiet, "no progress line on stderr (shown only when stderr is a terminal)");
  cmd->add_flag("--progress", args->progress,
                "draw the progress line even when stderr is not a terminal (under mpirun it is a pipe)");
  add_runtime_options(*cmd, &args->runtime, &args->backend);
  add_reliability_options(*cmd, &args->reliability, "a line per row");
  cmd->add_option("--inject-corruption", args->corrupt_rank,
                  "testing: write a wrong input element on this rank before each checked run")
      ->group("Testing");
  cmd->callback([args, action] {
    finish(*args);
    *action = [args] { return run_on_all_ranks([&](const MpiComm& world) { return run_bench(*args, world); }); };
  });
}

}  // namespace commscale

// `commscale doctor`: a cluster acceptance test on every rank of the job (bench/doctor.hpp). Exit 0
// when every judged check passes, 6 when one is below expectation.

#include <algorithm>
#include <charconv>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "bench/doctor.hpp"
#include "cli/command.hpp"
#include "cli/doctor_expectations.hpp"
#include "cli/number_options.hpp"
#include "cli/option_rules.hpp"
#include "cli/predict_options.hpp"
#include "cli/reliability_options.hpp"
#include "core/atomic_file.hpp"
#include "core/output_check.hpp"
#include "core/size.hpp"
#include "hw/topology_dir.hpp"
#include "report/doctor_reporters.hpp"

namespace commscale {
namespace {

struct DoctorArguments {
  std::string cluster;
  std::string calibration;
  std::vector<std::string> expect;
  std::string skip;
  double min_ratio = 0.0;  // 0: the backend's default
  std::string size;
  std::string pair_size;
  std::string pairs = "auto";
  double timeout_s = 0.0;
  std::string slow_rank;
  std::string sm_hog;
  std::string backend = "auto";
  ReliabilityArguments reliability;
  DoctorOptions options;
  DoctorExpectArguments expectations;
  RuntimeOptions runtime;
};

constexpr int kMaxIterations = 1000000;

// "RANK:VALUE" with a whole rank and a real value in `range`.
std::pair<int, double> rank_and_value(const std::string& text, const std::string& flag, const RealRange& range,
                                      const std::string& expected) {
  const std::size_t colon = text.find(':');
  int rank = -1;
  const char* end = text.data() + (colon == std::string::npos ? text.size() : colon);
  const auto [at, ec] = std::from_chars(text.data(), end, rank);
  const std::optional<double> value =
      colon == std::string::npos ? std::nullopt : real_within(std::string_view(text).substr(colon + 1), range);
  if (ec != std::errc() || at != end || rank < 0 || !value) {
    throw InputError(flag, fmt::format("\"{}\"", text), expected);
  }
  return {rank, *value};
}

std::map<std::string, double> parse_expect(const std::vector<std::string>& items) {
  std::string keys;
  for (const predict::StatedKey& k : predict::stated_keys())
    keys += fmt::format("{}{} ({})", keys.empty() ? "" : ", ", k.key, k.unit);
  std::map<std::string, double> stated;
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const auto& all = predict::stated_keys();
    const bool known = std::any_of(all.begin(), all.end(), [&](const predict::StatedKey& k) { return k.key == key; });
    if (eq == std::string::npos || !known) {
      throw InputError("--expect", fmt::format("\"{}\"", item), "KEY=VALUE with KEY one of " + keys);
    }
    const std::optional<double> value = real_within(std::string_view(item).substr(eq + 1), {0.0, 1e12, "", "", true});
    if (!value) throw InputError("--expect", fmt::format("\"{}\"", item), "a positive number after " + key + "=");
    stated[key] = *value;
  }
  return stated;
}

std::vector<std::string> phases_after_skip(const std::string& skip) {
  std::vector<std::string> phases(std::begin(kDoctorPhases), std::end(kDoctorPhases));
  if (skip.empty()) return phases;
  for (const std::string& p : split_list(skip, "--skip")) {
    const auto at = std::find(phases.begin(), phases.end(), p);
    if (at == phases.end()) {
      throw InputError("--skip", fmt::format("\"{}\" is no phase (or is named twice)", p), "gpu, node, job or pairs");
    }
    phases.erase(at);
  }
  if (phases.empty()) throw InputError("--skip", "skips every phase", "at least one of gpu, node, job, pairs to run");
  return phases;
}

void finish_expectations(DoctorArguments& a) {
  a.expectations.stated = parse_expect(a.expect);
  if (a.cluster.empty() && a.calibration.empty()) return;
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  if (!a.cluster.empty()) {
    a.expectations.cluster_name = a.cluster;
    a.expectations.cluster = catalog.cluster(a.cluster, "--cluster");
  }
  a.expectations.calibration = load_calibration_option(a.calibration, catalog);
}

// Checks the arguments before MPI starts: a mistake is reported once, with exit code 2.
void finish(DoctorArguments& a) {
  DoctorOptions& o = a.options;
  o.phases = phases_after_skip(a.skip);
  if (a.min_ratio > 0.0) o.min_ratio = a.min_ratio;
  if (!a.size.empty()) o.size = parse_size(a.size, "--size");
  if (!a.pair_size.empty()) o.pair_size = parse_size(a.pair_size, "--pair-size");
  for (const auto& [flag, size] : {std::pair{"--size", o.size}, std::pair{"--pair-size", o.pair_size}}) {
    if (size && size->count() < 4) throw InputError(flag, format_size(*size), "at least 4 bytes (one fp32 element)");
  }
  if (a.pairs == "auto") {
    o.pairs = PairUnits::kAuto;
  } else if (a.pairs == "nodes") {
    o.pairs = PairUnits::kNodes;
  } else if (a.pairs == "ranks") {
    o.pairs = PairUnits::kRanks;
  } else {
    throw InputError("--pairs", fmt::format("\"{}\"", a.pairs), "auto, nodes or ranks");
  }
  if (o.iters < 1 || o.iters > kMaxIterations) throw InputError("-n/--iters", std::to_string(o.iters), "1 to 1000000");
  if (o.warmup < 0 || o.warmup > kMaxIterations)
    throw InputError("-w/--warmup", std::to_string(o.warmup), "0 to 1000000");
  if (o.gemm_reps < 1 || o.gemm_reps > 100000) {
    throw InputError("--gemm-reps", std::to_string(o.gemm_reps), "1 to 100000");
  }
  o.timeout = Seconds(a.timeout_s);
  a.runtime.timeout = o.timeout;
  if (!a.slow_rank.empty()) {
    const auto [rank, us] = rank_and_value(a.slow_rank, "--inject-slow-rank", {0.0, 1e7, "", "", true},
                                           "RANK:MICROSECONDS, e.g. 2:5000 (rank 2 waits 5 ms before each collective)");
    o.slow_rank = RankDelay{rank, us};
  }
  if (!a.sm_hog.empty()) {
    const auto [rank, fraction] =
        rank_and_value(a.sm_hog, "--inject-sm-hog", {0.0, 1.0, "", "", true},
                       "RANK:FRACTION, e.g. 0:0.5 (half of rank 0's SMs held during its GEMM)");
    o.sm_hog = SmHogRequest{rank, fraction};
  }
  o.jsonl_path = resolve_jsonl_path(a.reliability, o.json_path);
  if (launched_as_rank_zero()) {
    check_outputs({{"-J/--json", o.json_path}, {jsonl_flag(a.reliability), o.jsonl_path}});
  }
  finish_expectations(a);
  finish_runtime_options(&a.runtime, a.backend);
}

int run_doctor_command(const DoctorArguments& a, const MpiComm& world) {
  const DoctorOptions& o = a.options;
  if (o.slow_rank) check_testing_rank(world, o.slow_rank->rank, "--inject-slow-rank", a.slow_rank);
  if (o.sm_hog) check_testing_rank(world, o.sm_hog->rank, "--inject-sm-hog", a.sm_hog);
  RankSession session = start_rank_session(a.runtime, world);
  if (o.sm_hog && session.backend->kind() != "gpu") {
    fail_on_all_ranks(world, InputError("--inject-sm-hog", "holds SMs of a GPU, and the CPU backend has none",
                                        "the GPU backend, or no --inject-sm-hog"));
  }
  std::unique_ptr<predict::DoctorExpectations> expect;
  DoctorReporterList reporters;
  const bool reporting = world.rank() == 0;
  if (reporting) {
    expect = doctor_expectations(a.expectations, session.context, session.backend->kind() == "gpu");
    reporters.add(make_text_doctor_reporter(std::cout));
    if (!o.json_path.empty()) reporters.add(make_json_doctor_reporter(o.json_path));
    if (!o.jsonl_path.empty()) reporters.add(make_jsonl_doctor_reporter(o.jsonl_path));
  }
  const DoctorReport report = run_doctor(o, session, world, expect.get(), reporting ? &reporters : nullptr);
  return report.verdict.failed == 0 ? 0 : kDoctorBelowExpectation;
}

void add_doctor_options(CLI::App& cmd, DoctorArguments& a) {
  DoctorOptions& o = a.options;
  mark_input_file(cmd.add_option(
      "--cluster", a.cluster,
      "the catalog cluster (name or file) the job runs on: what every GPU, link and NIC should deliver (default: the "
      "catalog cluster hw match finds for rank 0's node's GPUs, else that node as topo discovers it; none on the CPU "
      "backend)"));
  mark_input_file(cmd.add_option("--calibration", a.calibration,
                                 "a calibration profile (commscale calibrate) of a known-good node"));
  cmd.add_option("--expect", a.expect,
                 "KEY=VALUE: what a check should measure, overriding the cluster (gemm TFLOP/s, host_copy, p2p, "
                 "node_all_reduce, all_reduce, all_gather, pair GB/s, nic Gb/s); repeatable");
  add_real_option(cmd, "--min-ratio", &a.min_ratio,
                  "a check fails below this fraction of its expectation (default 0.85 on GPUs, 0.15 on the CPU "
                  "backend: src/bench/DOCTOR.md)",
                  {0.0, 2.0, "more than 0, at most 2", "", true});
  cmd.add_option("--skip", a.skip, "phases not to run, a comma list of gpu, node, job, pairs");
  cmd.add_option("--size", a.size,
                 "bytes of each collective of the node and job phases (default 4G on GPUs, 1M on the CPU backend)");
  cmd.add_option("--pair-size", a.pair_size,
                 "bytes of each pair-round transfer (default 1G on GPUs, 4M on the CPU backend)");
  cmd.add_option("--pairs", a.pairs, "what the pair rounds pair: auto (nodes, or ranks on one node), nodes or ranks")
      ->capture_default_str();
  cmd.add_option("-n,--iters", o.iters, "timed iterations of each collective")->capture_default_str();
  cmd.add_option("-w,--warmup", o.warmup, "untimed iterations before them")->capture_default_str();
  add_real_option(cmd, "--gemm-seconds", &o.gemm_seconds, "seconds the GEMM runs before it is timed (clocks settle)",
                  {0.0, 600.0, "0 to 600 s", " s", false})
      ->capture_default_str();
  cmd.add_option("--gemm-reps", o.gemm_reps, "GEMM calls timed back to back (their work over their span counts)")->capture_default_str();
  add_real_option(cmd, "-T,--timeout", &a.timeout_s,
                  "seconds an operation may take before the job is aborted (0: none)", timeout_s_range())
      ->capture_default_str();
  mark_output_file(cmd.add_option("-J,--json", o.json_path, "write the checks as JSON to this file"));
  mark_output_file(cmd.add_option(
      "--jsonl", a.reliability.jsonl_path,
      "append a line per check to this file as JSON Lines as the run goes (default with -J: beside it)"));
  cmd.add_option("--inject-slow-rank", a.slow_rank,
                 "testing: RANK:MICROSECONDS, that rank waits so long before each collective it issues")
      ->group("Testing");
  cmd.add_option("--inject-sm-hog", a.sm_hog,
                 "testing: RANK:FRACTION, a kernel holds that fraction of the rank's GPU's SMs while its GEMM runs")
      ->group("Testing");
}

}  // namespace

void add_doctor_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<DoctorArguments>();
  args->runtime.command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "Cluster acceptance test: every GPU, link, NIC and node against what it should deliver, with a verdict");
  add_doctor_options(*cmd, *args);
  add_runtime_options(*cmd, &args->runtime, &args->backend);
  cmd->callback([args, action] {
    finish(*args);
    *action = [args] {
      return run_on_all_ranks([&](const MpiComm& world) { return run_doctor_command(*args, world); });
    };
  });
}

}  // namespace commscale

// `commscale calibrate`: measures this GPU machine into a profile for `predict --calibration`.

#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "bench/calibrate.hpp"
#include "cli/command.hpp"
#include "cli/number_options.hpp"
#include "cli/option_rules.hpp"
#include "core/atomic_file.hpp"
#include "core/input_file.hpp"
#include "core/json_text.hpp"
#include "core/size.hpp"
#include "hw/json_reader.hpp"
#include "report/bench_reporters.hpp"
#include "report/calibration_merge.hpp"

namespace commscale {
namespace {

struct CalibrateArguments {
  std::string output;
  bool merge = false;
  bool quick = false;
  std::string measure = "gemm,memory,collectives,clock";
  std::string gemm_types = "bf16,fp16,fp32,fp8";
  std::string collectives = "all_reduce,all_gather,reduce_scatter,alltoall,sendrecv";
  std::string max_bytes = "1G";
  std::string backend = "auto";
  CalibrateOptions options;
  RuntimeOptions runtime;
};

template <typename T>
void check_each(const std::vector<T>& values, std::int64_t low, std::int64_t high, const char* flag,
                const char* expected) {
  for (const T v : values) {
    if (v < low || v > high) throw InputError(flag, fmt::format("{}", v), expected);
  }
}

nlohmann::ordered_json read_profile(const std::string& path) {
  nlohmann::ordered_json doc = hw::read_ordered_json_file(path);
  if (!doc.is_object()) {
    throw InputError(path, "is not a JSON object", "a calibration profile written by commscale calibrate");
  }
  return doc;
}

void finish(CalibrateArguments& a) {
  CalibrateOptions& o = a.options;
  bool gemm = false;
  bool memory = false;
  bool collectives = false;
  for (const std::string& item : split_list(a.measure, "--measure")) {
    if (item == "gemm") {
      gemm = true;
    } else if (item == "memory") {
      memory = true;
    } else if (item == "collectives") {
      collectives = true;
    } else if (item == "host") {
      o.host = true;
    } else if (item == "interference") {
      o.interference = true;
    } else if (item == "clock") {
      o.clock = true;
    } else {
      throw InputError("--measure", fmt::format("unknown measurement \"{}\"", item),
                       "gemm, memory, collectives, clock, host and/or interference");
    }
  }
  o.gemm_types.clear();
  if (gemm) {
    for (const std::string& item : split_list(a.gemm_types, "--gemm-types")) {
      // fp8: TransformerEngine's forward GEMM, E4M3 x E4M3 -> bf16 (bench/calibrate.cpp).
      const DataType type = item == "fp8" ? DataType::kFp8E4M3 : parse_data_type(item, "--gemm-types");
      if (type != DataType::kBFloat16 && type != DataType::kFloat16 && type != DataType::kFloat32 &&
          type != DataType::kFp8E4M3) {
        throw InputError("--gemm-types", fmt::format("{} GEMMs are not calibrated", item), "bf16, fp16, fp32 or fp8");
      }
      o.gemm_types.push_back(type);
    }
  }
  if (!memory) o.memory_max = Bytes(0);
  o.collectives.clear();
  if (collectives) {
    for (const std::string& item : split_list(a.collectives, "--collectives")) {
      o.collectives.push_back(parse_collective(item, "--collectives"));
    }
  }
  o.collective_max = parse_size(a.max_bytes, "--max-bytes");
  if (o.collective_max < o.collective_min) {
    throw InputError("--max-bytes", fmt::format("{} is below the smallest size", a.max_bytes), "at least 1K");
  }
  if (a.quick) {
    o.gemm_dims = {2048, 8192};
    o.attention_seqs = {2048};
    o.attention_head_dims = {128};
    o.attention_batches = {32};
    o.interference_sms = {4, 16};
    o.collective_max = std::min(o.collective_max, Bytes(64ull << 20));
    o.memory_max = std::min(o.memory_max, Bytes(1ull << 30));
    o.repetitions = std::min(o.repetitions, 10);
  }
  check_each(o.gemm_dims, 1, 1 << 17, "--gemm-dims", "sizes from 1 to 131072");
  check_each(o.attention_batches, 1, 4096, "--attention-batches", "batch counts from 1 to 4096");
  check_each(o.attention_seqs, 1, 1 << 17, "--attention-seqs", "sequence lengths from 1 to 131072");
  check_each(o.attention_head_dims, 1, 1024, "--attention-head-dims", "head sizes from 1 to 1024");
  check_each(o.interference_sms, 1, 256, "--interference-sms", "SM counts from 1 to 256");
  if (o.repetitions < 1) throw InputError("-n/--repetitions", fmt::format("{}", o.repetitions), "at least 1");
  check_count(o.repetitions, 1, kMaxIterations, "-n/--repetitions", "repetitions");
  if (a.merge) {
    if (!input_exists(a.output)) {
      throw InputError("--merge", fmt::format("{} does not exist", a.output), "-o naming a profile to add to");
    }
    (void)read_profile(a.output);  // now, not after a measurement that a profile it cannot read would lose
  }
  if (launched_as_rank_zero()) ensure_writable(a.output, "-o/--output");
  finish_runtime_options(&a.runtime, a.backend);
}

int run_calibrate(const CalibrateArguments& a, const MpiComm& world) {
  const RankSession session = start_rank_session(a.runtime, world);
  nlohmann::ordered_json profile = run_calibration(
      a.options, session, world, [] { return make_text_bench_reporter(std::cout); }, std::cout);
  if (world.rank() != 0) return 0;
  if (a.merge) {
    nlohmann::ordered_json base = read_profile(a.output);
    merge_calibration(base, profile, a.output);
    profile = std::move(base);
  }
  write_file_atomically(a.output, json_text(profile, 1));
  std::cout << fmt::format("# calibration profile: {}\n", a.output);
  return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<CalibrateArguments>();
  args->runtime.command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Measure this GPU machine (GEMMs, memory kernels, collectives, host costs, interference) into a profile for "
      "predict --calibration");
  CalibrateOptions& o = args->options;
  // Not an input though --merge reads it: --merge rewrites the profile it adds to on purpose.
  mark_output_file(cmd->add_option("-o,--output", args->output, "the profile to write")->required());
  cmd->add_flag("--merge", args->merge,
                "add to the profile already in -o (rows of the same shape or group replace it): run once per "
                "transport, e.g. under NCCL_P2P_DISABLE=1, with --measure collectives");
  cmd->add_option("--measure", args->measure,
                  "what to measure: gemm, memory, collectives, clock (a GEMM's speed when memory-bound kernels "
                  "take part of the time: the clock under the power limit); host (commscale's host time per op, "
                  "the kernel floor) and interference (a probe holding SMs beside GEMMs and memory kernels), GPU only")
      ->capture_default_str();
  cmd->add_option("--gemm-types", args->gemm_types,
                  "GEMM types (fp32 runs without TF32; fp8: E4M3 x E4M3 -> bf16, skipped on a GPU without FP8)")
      ->capture_default_str();
  cmd->add_option("--gemm-dims", o.gemm_dims, "m, n and k of the GEMM grid (each combination)")->capture_default_str();
  cmd->add_option("--attention-batches", o.attention_batches,
                  "batch counts of the attention GEMMs (micro-batch x heads per tensor-parallel rank)")
      ->capture_default_str();
  cmd->add_option("--attention-seqs", o.attention_seqs, "sequence lengths of the attention GEMMs")->capture_default_str();
  cmd->add_option("--attention-head-dims", o.attention_head_dims,
                  "head sizes of the attention GEMMs (fp32: 128 only, from sequence 1024)")
      ->capture_default_str();
  cmd->add_option("--interference-sms", o.interference_sms, "SMs the interference probe holds, one run each")
      ->capture_default_str();
  add_real_option(*cmd, "--heat-ms", &o.heat_ms,
                  "before each GEMM shape or memory size, a large GEMM runs this long, so the timed calls see "
                  "the clocks of a sustained load (0: time from whatever state the GPU is in)",
                  {0.0, 10000.0, "0 to 10000 milliseconds", "", false})
      ->capture_default_str();
  cmd->add_option("--collectives", args->collectives, "collectives to sweep")->capture_default_str();
  cmd->add_option("--max-bytes", args->max_bytes, "largest collective size (from 1K, doubling)")->capture_default_str();
  cmd->add_option("-n,--repetitions", o.repetitions, "timed calls per shape, kernel or size (median kept)")
      ->capture_default_str();
  cmd->add_flag("--quick", args->quick,
                "a small grid (2048 and 8192; attention at seq 2048, head 128, batch 32), probe at 4 and 16 SMs, "
                "collectives to 64M, 10 repetitions");
  mark_input_file(cmd->add_option("--gpu", o.gpu, "the catalog GPU this machine has (default: from the device name)"));
  mark_input_file(
      cmd->add_option("--cluster", o.cluster, "the catalog cluster this machine is, recorded in the profile"));
  cmd->add_option("--description", o.description, "recorded in the profile");
  add_runtime_options(*cmd, &args->runtime, &args->backend);
  cmd->callback([args, action] {
    finish(*args);
    *action = [args] { return run_on_all_ranks([&](const MpiComm& world) { return run_calibrate(*args, world); }); };
  });
}

}  // namespace commscale

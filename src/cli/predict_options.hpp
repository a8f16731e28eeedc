#pragma once

// Flags shared by the predictor's commands (predict, search, compare): the calibration profile, and
// writing results (--json to stdout, -J FILE atomically).

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/output_check.hpp"
#include "hw/catalog.hpp"
#include "parallel/plan_request.hpp"
#include "predict/calibration.hpp"
#include "predict/search.hpp"

namespace commscale {

struct OutputArguments {
  bool json = false;
  std::string json_path;
};

void add_output_options(CLI::App& command, OutputArguments* args);
// Checks that -J's file and the command's `more` outputs can be written, each to its own file (before
// any work).
void finish_output_options(const OutputArguments& args, std::vector<NamedOutput> more = {});
// Writes `doc` to -J's file (atomically) and, with --json, to stdout; returns whether text should follow.
[[nodiscard]] bool emit_json(const OutputArguments& args, const nlohmann::json& doc);

// --host-framework NAME: whose host issues the step's ops (program/host_costs.hpp). Without it, the
// host row of the framework that runs the step (parallel/framework.hpp).
CLI::Option* add_host_framework_option(CLI::App& command, std::string* framework);
[[nodiscard]] HostCosts resolve_host_framework(const std::string& given, Framework framework, KernelSet kernels,
                                               const predict::CalibrationProfile* profile);

// --framework for search and compare, which build their plans themselves: the framework's kernels and
// flash attention where neither the flags nor the request's plan file gave them, its optimizer and its
// gradient reduction. Throws InputError naming --framework.
CLI::Option* add_framework_option(CLI::App& command, std::string* framework);
// --threads of search and compare: the threads that estimate plans (0: one per CPU this process may use).
void add_threads_option(CLI::App& command, int* threads);
// --cp (context-parallel sizes to enumerate, a comma list) and --cp-comm-type of search and compare.
void add_context_parallel_options(CLI::App& command, predict::SearchOptions* o);
// --etp N,M: the expert-tensor-parallel sizes search and compare enumerate for a model with experts.
void add_expert_tensor_parallel_option(CLI::App& command, predict::SearchOptions* o);

// The ranges a search enumerates, bounded before it starts (search and compare): a positive global batch,
// --max-micro-batch 1 to kMaxMicroBatch, --max-chunks 1 to kMaxSearchChunks, --threads 0 to kMaxSearchThreads.
// Throws InputError naming the flag.
inline constexpr int kMaxSearchChunks = 1024;
inline constexpr int kMaxSearchThreads = 1024;
void check_search_ranges(const predict::SearchOptions& o);
void finish_search_framework(const std::string& given, const CLI::App& command, const PlanRequest& request,
                             predict::SearchOptions& o);

// --calibration FILE: null when not given. Throws InputError naming the file and key.
[[nodiscard]] std::shared_ptr<const predict::CalibrationProfile> load_calibration_option(const std::string& path,
                                                                                         const hw::Catalog& catalog);

}  // namespace commscale

#include "cli/predict_options.hpp"

#include <algorithm>
#include <charconv>
#include <iostream>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/megatron_flags.hpp"
#include "cli/option_rules.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "predict/host_catalog.hpp"

namespace commscale {
namespace {

// The host row of the framework that runs the step (parallel/framework.hpp). commscale's own executor with
// eager PyTorch's kernel list has no host of its own: device time alone, as before --framework existed.
std::string default_host_framework(Framework framework, KernelSet kernels) {
  if (framework == Framework::kCommscale && kernels == KernelSet::kEager) return std::string(predict::kNoHost);
  return std::string(defaults_of(framework).host_row);
}

// Sizes to enumerate, a comma list (--cp 1,2,4, --etp 1,2): whole numbers of 1 to kMaxRanks, each once, no item
// empty. CLI11's delimiter dropped an empty item with no word, and kept a repeated size, whose plans were then
// predicted and ranked twice (--etp 2,2 listed every plan two times).
std::vector<int> parallel_sizes(const std::string& text, const std::string& flag, const std::string& what) {
  std::vector<int> sizes;
  for (const std::string& item : split_list(text, flag)) {
    int size = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), size);
    if (ec != std::errc() || end != item.data() + item.size() || size < 1 || size > kMaxRanks) {
      throw InputError(flag, item, fmt::format("{} sizes of 1 to {}", what, kMaxRanks));
    }
    if (std::find(sizes.begin(), sizes.end(), size) != sizes.end()) {
      throw InputError(flag, fmt::format("{} is given twice", size), "each size once");
    }
    sizes.push_back(size);
  }
  return sizes;
}

}  // namespace

void add_output_options(CLI::App& command, OutputArguments* args) {
  command.add_flag("--json", args->json, "print the result as JSON (instead of text)");
  mark_output_file(command.add_option("-J,--output_file", args->json_path, "write the result as JSON to this file"));
}

void finish_output_options(const OutputArguments& args, std::vector<NamedOutput> more) {
  more.insert(more.begin(), NamedOutput{"-J", args.json_path});
  check_outputs(more);
}

bool emit_json(const OutputArguments& args, const nlohmann::json& doc) {
  if (!args.json_path.empty()) write_file_atomically(args.json_path, json_text(doc, 2));
  if (args.json) std::cout << json_text(doc, 2);
  return !args.json;
}

CLI::Option* add_host_framework_option(CLI::App& command, std::string* framework) {
  return command.add_option(
      "--host-framework", *framework,
      "whose host issues the step's ops, at its measured cost per op: a framework of "
      "topologies/frameworks.json or of --calibration's profile, or none (device time alone); "
      "default: --framework's (megatron for megatron-lm and megatron-deepspeed, pytorch-eager for "
      "pytorch-ddp and pytorch-fsdp, commscale for commscale)");
}

HostCosts resolve_host_framework(const std::string& given, Framework framework, KernelSet kernels,
                                 const predict::CalibrationProfile* profile) {
  const std::string row = !given.empty() ? given : default_host_framework(framework, kernels);
  HostCosts costs = predict::host_costs_for(row, profile, "--host-framework");
  // Who issues the GEMMs follows --framework, whichever host row prices the issuing: commscale's executor
  // calls cuBLASLt for each product (its GEMM figures), every other framework goes through PyTorch.
  costs.attention = framework == Framework::kCommscale ? AttentionIssue::kPerProduct : AttentionIssue::kPerKernel;
  // Megatron synchronises the device after each batch of pipeline sends and receives; a host that costs
  // nothing (`none`: device time alone) is left without it.
  costs.sync_after_p2p =
      !costs.zero() && (framework == Framework::kMegatronLm || framework == Framework::kMegatronDeepSpeed);
  return costs;
}

CLI::Option* add_framework_option(CLI::App& command, std::string* framework) {
  std::string names;
  for (const FrameworkDefaults& d : frameworks()) names += fmt::format("{}{}", names.empty() ? "" : ", ", d.name);
  return command.add_option("--framework", *framework,
                            fmt::format("the framework that runs the step, which sets the defaults of --kernels, "
                                        "--flash-attn, the optimizer, ZeRO, the host costs (--host-framework) and "
                                        "whether gradients are reduced during the backward: {} (default {})",
                                        names, name(kDefaultFramework)));
}

void add_threads_option(CLI::App& command, int* threads) {
  command
      .add_option("--threads", *threads,
                  "threads estimating plans (default 0: one per CPU this process may use; the plans found do not "
                  "depend on it)")
      ->capture_default_str();
}

void add_context_parallel_options(CLI::App& command, predict::SearchOptions* o) {
  command.add_option_function<std::string>(
      "--cp,--context-parallel-size",
      [o](const std::string& text) { o->cp = parallel_sizes(text, "--cp", "context-parallel"); },
      "context-parallel sizes to enumerate, comma-separated (default 1: none; CONTEXT_PARALLEL.md)");
  command.add_option_function<std::string>(
      "--cp-comm-type", [o](const std::string& text) { o->cp_comm = parse_cp_comm_type(text, "--cp-comm-type"); },
      "how the plans with --cp exchange keys and values: p2p (default) or all_gather");
}

void add_expert_tensor_parallel_option(CLI::App& command, predict::SearchOptions* o) {
  command.add_option_function<std::string>(
      "--etp,--expert-tensor-parallel-size",
      [o](const std::string& text) { o->etp = parallel_sizes(text, "--etp", "expert-tensor-parallel"); },
      "expert-tensor-parallel sizes to enumerate for a model with experts, comma-separated (default 1: none; "
      "MOE.md)");
}

void check_search_ranges(const predict::SearchOptions& o) {
  for (const int cp : o.cp) {
    if (cp < 1 || cp > kMaxRanks) {
      throw InputError("--cp", fmt::format("{}", cp), fmt::format("context-parallel sizes of 1 to {}", kMaxRanks));
    }
  }
  for (const int etp : o.etp) {
    if (etp < 1 || etp > kMaxRanks) {
      throw InputError("--etp", fmt::format("{}", etp),
                       fmt::format("expert-tensor-parallel sizes of 1 to {}", kMaxRanks));
    }
  }
  if (o.global_batch < 1) throw InputError("--global-batch", fmt::format("{}", o.global_batch), "a positive number");
  if (o.max_micro_batch < 1 || o.max_micro_batch > kMaxMicroBatch) {
    throw InputError("--max-micro-batch", fmt::format("{}", o.max_micro_batch), fmt::format("1 to {}", kMaxMicroBatch));
  }
  if (o.max_chunks < 1 || o.max_chunks > kMaxSearchChunks) {
    throw InputError("--max-chunks", fmt::format("{}", o.max_chunks),
                     fmt::format("1 to {} (a chunk holds at least one layer)", kMaxSearchChunks));
  }
  if (o.threads < 0 || o.threads > kMaxSearchThreads) {
    throw InputError("--threads", fmt::format("{}", o.threads),
                     fmt::format("0 (one per CPU this process may use) to {}", kMaxSearchThreads));
  }
}

void finish_search_framework(const std::string& given, const CLI::App& command, const PlanRequest& request,
                             predict::SearchOptions& o) {
  o.framework = given.empty() ? kDefaultFramework : parse_framework(given, "--framework");
  const FrameworkDefaults& d = defaults_of(o.framework);
  const auto given_flag = [&](const std::string& flag) {
    return option_given(&command, flag) || plan_value_given(request, flag);
  };
  if (!given_flag("--kernels")) o.kernels = d.kernels;
  if (!given_flag("--flash-attn")) o.flash_attention = d.flash_attention;
  o.optimizer = d.optimizer;
  o.overlap_grad_reduce = d.overlap_grad_reduce;
}

std::shared_ptr<const predict::CalibrationProfile> load_calibration_option(const std::string& path,
                                                                           const hw::Catalog& catalog) {
  if (path.empty()) return nullptr;
  return std::make_shared<const predict::CalibrationProfile>(predict::load_calibration(path, catalog));
}

}  // namespace commscale

// `commscale compare`: one model across clusters, each with its best plan that fits, with cost per
// million tokens and energy per token, and optionally a scaling sweep (src/predict/compare.hpp). Pure:
// no MPI, no GPU. Exit codes: 0 (also when some cluster has no plan that fits: the table says so);
// 2 bad input.

#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/cost_options.hpp"
#include "cli/megatron_flags.hpp"
#include "cli/model_options.hpp"
#include "cli/number_options.hpp"
#include "cli/option_rules.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/predict_options.hpp"
#include "core/error.hpp"
#include "hw/topology_dir.hpp"
#include "parallel/plan.hpp"
#include "predict/compare.hpp"
#include "predict/what_if.hpp"
#include "report/compare_report.hpp"
#include "report/progress.hpp"

namespace commscale {
namespace {

// The example line-up: an NVSwitch A100 node, GeForce boxes without P2P, 3090s in NVLink
// pairs, and one A100 against six 3090s.
constexpr const char* kDefaultClusters =
    "hgx-a100,rtx4090-8x-pcie,rtx3090-4x-nvlink-pairs,rtx5090-8x-pcie,hgx-a100:1,rtx3090-6x-pcie";

struct CompareArguments {
  ModelPlanArguments model;
  std::string clusters = kDefaultClusters;
  CostArguments costs;
  std::string scaling;
  std::vector<std::string> set;
  std::string sweep;
  std::string calibration;
  std::string host_framework;
  std::string framework;
  std::string kernels = "fused";
  double workspace_gib = 2.0;
  predict::CompareInputs inputs;
  OutputArguments output;
  std::string command_line;
};

constexpr const char* kPriceForms =
    "GPU=USD (one GPU bought), CLUSTER=USD (one node) or CLUSTER:GPUS=USD (that entry of --clusters)";

// The names a price may be given for: the clusters being compared (and swept) and their GPUs.
struct PriceNames {
  std::set<std::string> clusters;
  std::set<std::string> gpus;
};
PriceNames price_names(const predict::CompareInputs& in, const hw::Catalog& catalog) {
  PriceNames out;
  std::vector<predict::ClusterChoice> all = in.clusters;
  if (in.scaling) all.push_back(*in.scaling);
  for (const predict::ClusterChoice& c : all) {
    const hw::ClusterSpec cluster = catalog.cluster(c.cluster, "--clusters");
    out.clusters.insert(cluster.name);
    out.gpus.insert(cluster.gpu.name);
  }
  return out;
}

// Each --price by what it names: an entry of --clusters as given (with ":"), a cluster, or a GPU of one;
// each --usd-per-gpu-hour a cluster or a GPU. Anything else is a typo that would silently change
// nothing, and is refused.
predict::UserPrices user_prices(const CompareArguments& a, const hw::Catalog& catalog) {
  const predict::CompareInputs& in = a.inputs;
  const PriceNames names = price_names(in, catalog);
  predict::UserPrices out;
  for (const auto& [key, usd] : parse_cluster_values(a.costs.node_prices, "--price", kPriceForms)) {
    if (key.find(':') != std::string::npos) {
      if (std::find(in.labels.begin(), in.labels.end(), key) == in.labels.end()) {
        throw InputError("--price", fmt::format("\"{}\" is not an entry of --clusters", key),
                         fmt::format("CLUSTER:GPUS as --clusters gives it; {}", kPriceForms));
      }
      out.entries[key] = usd;
    } else if (names.clusters.contains(key)) {
      out.nodes[key] = usd;
    } else if (names.gpus.contains(key)) {
      out.gpus[key] = usd;
    } else {
      throw InputError("--price", fmt::format("\"{}\" is not a cluster of --clusters or --scaling, nor their GPU", key),
                       kPriceForms);
    }
  }
  for (const auto& [key, usd] :
       parse_cluster_values(a.costs.gpu_hour_prices, "--usd-per-gpu-hour", "CLUSTER=USD or GPU=USD per GPU-hour")) {
    if (!names.clusters.contains(key) && !names.gpus.contains(key)) {
      throw InputError("--usd-per-gpu-hour",
                       fmt::format("\"{}\" is not a cluster of --clusters or --scaling, nor their GPU", key),
                       "CLUSTER=USD or GPU=USD per GPU-hour for a cluster being compared");
    }
    out.gpu_hours[key] = usd;
  }
  return out;
}

// A plan file gives compare its model, global batch and what-if overrides (the clusters are compare's).
void merge_compare_plan_file(CompareArguments& a) {
  merge_plan_file(a.model);
  merge_plan_file_cluster(a.model, nullptr, nullptr, &a.set);
  if (!a.model.loaded_plan || !a.model.loaded_plan->plan.global_batch) return;
  if (option_given(a.model.command, "--global-batch")) {
    a.model.over_file.push_back("--global-batch");
  } else {
    a.inputs.search.global_batch = *a.model.loaded_plan->plan.global_batch;
  }
}

// What a row shows, to tell whether a sweep changed it.
std::string row_of(const predict::CompareEntry& e) {
  if (!e.prediction) return fmt::format("no plan: {} {} {}", e.candidates, e.closest, e.batch_hint);
  const predict::Prediction& p = *e.prediction;
  return fmt::format("{} {} {} {} {}", p.summary.tokens_per_s, p.summary.step_time_s, predict::describe_plan(p.plan),
                     e.usd_per_million_tokens.value_or(-1.0), e.joules_per_token.value_or(-1.0));
}

// A swept value that changes no row of a cluster is said so, with why where it is known (one node).
std::vector<std::string> sweep_warnings(const CompareArguments& a, const predict::CompareResult& r,
                                        std::size_t values) {
  const std::size_t clusters = a.inputs.labels.size();
  hw::Override swept = hw::parse_override(a.sweep, "--sweep");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < clusters && values * clusters == r.entries.size(); ++i) {
    const predict::CompareEntry& first = r.entries[i];
    bool same = true;
    for (std::size_t v = 1; v < values; ++v) same = same && row_of(r.entries[v * clusters + i]) == row_of(first);
    if (!same) continue;
    const std::string& label = a.inputs.labels[i];
    std::vector<std::string> why = predict::unused_override_warnings({swept}, label, first.cluster, first.nodes);
    out.push_back(why.empty() ? fmt::format("--sweep {}: every value gives {} the same row: {} changes nothing "
                                            "its prediction uses",
                                            a.sweep, label, swept.key)
                              : why.front());
  }
  return out;
}

// The --set overrides that cannot change a cluster's row (the network's keys on one node).
std::vector<std::string> set_warnings(const predict::CompareInputs& in, const predict::CompareResult& r) {
  std::vector<std::string> out;
  for (const predict::CompareEntry& e : r.entries) {
    const std::string label = e.label.substr(0, e.label.find(" ["));
    for (const std::string& w : predict::unused_override_warnings(in.overrides, label, e.cluster, e.nodes)) {
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    }
  }
  return out;
}

// --sweep KEY=V1,V2,...: the comparison once per value, every entry labelled with its value.
predict::CompareResult run_sweep(const CompareArguments& a, const hw::Catalog& catalog,
                                 const predict::CompareProgress& report) {
  const std::size_t eq = a.sweep.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--sweep", fmt::format("\"{}\"", a.sweep), "KEY=V1,V2,... with KEY as --set takes it");
  }
  if (a.inputs.scaling) throw InputError("--sweep", "given with --scaling", "one of them");
  const std::string key = a.sweep.substr(0, eq);
  predict::CompareResult out;
  const std::vector<std::string> values = split_list(a.sweep.substr(eq + 1), "--sweep");
  for (const std::string& value : values) {
    predict::CompareInputs in = a.inputs;
    in.overrides.push_back(hw::parse_override(key + "=" + value, "--sweep"));
    for (std::string& label : in.labels) label += fmt::format(" [{}={}]", key, value);
    predict::CompareResult r = predict::compare_clusters(catalog, in, report);
    out.model = r.model;
    for (predict::CompareEntry& e : r.entries) out.entries.push_back(std::move(e));
  }
  if (values.size() > 1) out.warnings = sweep_warnings(a, out, values.size());
  return out;
}

int run_compare(CompareArguments& a) {
  merge_compare_plan_file(a);
  predict::CompareInputs& in = a.inputs;
  in.overrides = hw::parse_overrides(a.set, "--set");
  in.model = finish_model_options(a.model);
  in.search.kernels = parse_kernel_set(a.kernels, "--kernels");
  finish_search_framework(a.framework, *a.model.command, plan_request(a.model), in.search);
  in.search.lora = lora_from_arguments(a.model);
  in.search.fp8 = fp8_from_arguments(a.model);
  in.search.fp8_dispatch = fp8_dispatch_from_arguments(a.model);
  validate_fp8_dispatch(in.model, in.search.fp8, in.search.fp8_dispatch);
  const predict::TrainingChoices choices = training_choices(a.model, in.model.dtype, in.search.flash_attention);
  in.dtype_flag = choices.dtype_flag;
  in.flash_flag = choices.flash_flag;
  finish_output_options(a.output);
  const predict::SearchOptions& o = in.search;
  if (o.global_batch == 0) {
    throw InputError("--global-batch", "missing", "sequences per step, or a --plan-file with them");
  }
  check_search_ranges(o);
  // Each size of the sweep is a plan search: bounded as search's are, before any is started.
  if (in.scaling_max_gpus < 1 || in.scaling_max_gpus > kMaxSearchGpus) {
    throw InputError("--scaling-max", fmt::format("{} GPUs", in.scaling_max_gpus),
                     fmt::format("1 to {}, the most a plan search takes", kMaxSearchGpus));
  }
  in.search.memory.workspace = gib_to_bytes(a.workspace_gib);
  for (const std::string& label : split_list(a.clusters, "--clusters")) {
    if (std::find(in.labels.begin(), in.labels.end(), label) != in.labels.end()) {
      throw InputError("--clusters", fmt::format("\"{}\" is given twice", label), "each cluster once");
    }
    in.clusters.push_back(predict::parse_cluster_choice(label, "--clusters"));
    if (in.clusters.back().gpus > kMaxSearchGpus) {  // as search --gpus: each cluster is a plan search
      throw InputError("--clusters", fmt::format("{} GPUs in \"{}\"", in.clusters.back().gpus, label),
                       fmt::format("at most {} GPUs: the search takes many minutes beyond that", kMaxSearchGpus));
    }
    in.labels.push_back(label);
  }
  if (!a.scaling.empty()) in.scaling = predict::parse_cluster_choice(a.scaling, "--scaling");
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  in.prices = user_prices(a, catalog);
  const predict::UserPrices& p = in.prices;
  finish_cost_basis(a.costs, {!p.entries.empty() || !p.nodes.empty(), !p.gpus.empty(), !p.gpu_hours.empty()},
                    &in.search.costs);
  in.calibration = load_calibration_option(a.calibration, catalog);
  in.host = resolve_host_framework(a.host_framework, in.search.framework, in.search.kernels, in.calibration.get());
  Progress progress(progress_enabled(false) ? &std::cerr : nullptr, "compare", 0);
  const predict::CompareProgress report = [&](std::size_t done, std::size_t total, const std::string& next) {
    progress.set_total(total);
    progress.update(done, fmt::format("searching {}", next));
  };
  predict::CompareResult r =
      a.sweep.empty() ? predict::compare_clusters(catalog, in, report) : run_sweep(a, catalog, report);
  progress.finish();
  if (!in.scaling) {
    std::vector<std::string> warnings = set_warnings(in, r);
    r.warnings.insert(r.warnings.begin(), warnings.begin(), warnings.end());
  }
  nlohmann::json doc = predict::compare_to_json(r, in);
  doc["command_line"] = a.command_line;
  doc["context"] = inputs_context(a.model, in.overrides);
  if (!a.sweep.empty()) doc["context"]["sweep"] = a.sweep;
  if (emit_json(a.output, doc)) {
    std::cout << inputs_line(a.model, in.overrides);
    predict::print_compare(std::cout, r, in);
  }
  return static_cast<int>(ExitCode::kOk);
}

}  // namespace

void add_compare_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<CompareArguments>();
  args->command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "One model across clusters, each with its best plan that fits: throughput, cost per million tokens, "
      "energy per token; and a scaling sweep from 1 GPU to thousands");
  add_model_options(*cmd, &args->model);
  predict::SearchOptions& o = args->inputs.search;
  o.top = 1;
  mark_input_file(
      cmd->add_option("--clusters", args->clusters, "clusters to compare, CLUSTER or CLUSTER:GPUS, comma-separated")
          ->capture_default_str());
  cmd->add_option("--global-batch,--global-batch-size", o.global_batch,
                  "sequences per step over all replicas (required unless the --plan-file has it)");
  add_cost_options(*cmd, &o.costs, &args->costs);
  cmd->add_option("--price", args->costs.node_prices,
                  "GPU=USD (one GPU bought: --cost-basis system or gpus), CLUSTER=USD (one whole node) or "
                  "CLUSTER:GPUS=USD (that entry of --clusters; both --cost-basis system); default: the catalog's");
  cmd->add_option("--usd-per-gpu-hour", args->costs.gpu_hour_prices,
                  "CLUSTER=USD or GPU=USD: rental price per GPU-hour (--cost-basis cloud; default: the GPU file's)");
  mark_input_file(cmd->add_option("--scaling", args->scaling, "also sweep this cluster from 1 GPU up (CLUSTER)"));
  add_set_option(*cmd, &args->set);
  cmd->add_option("--sweep", args->sweep,
                  "KEY=V1,V2,...: the comparison once per value of one --set key "
                  "(e.g. network.nic_rate_Gbps=100,200,400)");
  cmd->add_option("--scaling-max", args->inputs.scaling_max_gpus, "largest GPU count of the sweep")
      ->capture_default_str();
  cmd->add_option("--max-micro-batch", o.max_micro_batch, "largest micro-batch tried (powers of two)")
      ->capture_default_str();
  add_threads_option(*cmd, &o.threads);
  o.flash_attention = true;  // every current training recipe uses it
  cmd->add_flag("--flash-attn,--use-flash-attn,!--no-flash-attn", o.flash_attention,
                "every plan uses fused (flash) attention (the default; --no-flash-attn: none does)");
  cmd->add_option("--kernels", args->kernels, "every plan with fused (Megatron-LM's) or eager (PyTorch's) kernels")
      ->capture_default_str();
  add_context_parallel_options(*cmd, &o);
  add_expert_tensor_parallel_option(*cmd, &o);
  add_lora_options(*cmd, &args->model, "Options");
  add_fp8_option(*cmd, &args->model, "Options");
  mark_input_file(
      cmd->add_option("--calibration", args->calibration, "a calibration profile (commscale calibrate) to use"));
  add_host_framework_option(*cmd, &args->host_framework);
  add_framework_option(*cmd, &args->framework);
  add_real_option(*cmd, "--workspace-gib", &args->workspace_gib, "memory allowance per rank beyond the model's",
                  workspace_gib_range())
      ->capture_default_str();
  add_output_options(*cmd, &args->output);
  cmd->callback([args, action] { *action = [args] { return run_compare(*args); }; });
}

}  // namespace commscale

// `commscale search`: every valid plan of a model on a cluster, ranked by throughput or cost per token,
// with the top K and why the others lose (src/predict/search.hpp). Pure: no MPI, no GPU. Exit codes:
// 0 (at least one plan fits); 1 (no plan fits: the output names the closest); 2 bad input.

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/cost_options.hpp"
#include "cli/megatron_flags.hpp"
#include "cli/model_options.hpp"
#include "cli/number_options.hpp"
#include "cli/option_rules.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/predict_options.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "hw/catalog.hpp"
#include "hw/topology_dir.hpp"
#include "parallel/plan.hpp"
#include "parallel/rank_layout.hpp"
#include "predict/search.hpp"
#include "predict/what_if.hpp"
#include "report/progress.hpp"
#include "report/search_report.hpp"

namespace commscale {
namespace {

struct SearchArguments {
  ModelPlanArguments model;
  std::string cluster;
  int nodes = 0;  // 0: as many as --gpus needs, else 1
  const CLI::Option* nodes_flag = nullptr;
  std::vector<std::string> set;
  std::string best_plan_path;
  std::string gpus;
  std::string rank_by = "throughput";
  std::string kernels = "fused";
  double node_price_usd = 0.0;
  double usd_per_gpu_hour = 0.0;
  CostArguments costs;
  std::string calibration;
  std::string host_framework;
  std::string framework;
  std::string optimizer;  // empty: the framework's
  double workspace_gib = 2.0;
  predict::SearchOptions options;
  OutputArguments output;
  std::string command_line;
};

// "64,128": positive GPU counts, each once.
std::vector<int> parse_gpu_counts(const std::string& text) {
  std::vector<int> out;
  for (const std::string& item : split_list(text, "--gpus")) {
    int n = 0;
    std::size_t used = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || n < 1 || std::find(out.begin(), out.end(), n) != out.end()) {
      throw InputError("--gpus", fmt::format("\"{}\"", item), "positive GPU counts, comma-separated, each once");
    }
    out.push_back(n);
  }
  return out;
}

void check_options(SearchArguments& a) {
  predict::SearchOptions& o = a.options;
  check_search_ranges(o);
  if (o.top < 1) throw InputError("--top", fmt::format("{}", o.top), "at least 1");
  if (a.node_price_usd > 0) o.costs.node_price_usd = a.node_price_usd;
  if (a.usd_per_gpu_hour > 0) o.costs.usd_per_gpu_hour = a.usd_per_gpu_hour;
  finish_cost_basis(a.costs, {a.node_price_usd > 0, false, a.usd_per_gpu_hour > 0}, &o.costs);
  o.memory.workspace = gib_to_bytes(a.workspace_gib);
  (void)RankLayout(1, 1, 1, o.order);  // throws InputError naming --order
  o.kernels = parse_kernel_set(a.kernels, "--kernels");
  finish_search_framework(a.framework, *a.model.command, plan_request(a.model), o);
  if (!a.optimizer.empty()) o.optimizer = parse_optimizer(a.optimizer, "--optimizer");
  o.lora = lora_from_arguments(a.model);
  o.fp8 = fp8_from_arguments(a.model);
  o.fp8_dispatch = fp8_dispatch_from_arguments(a.model);
  if (a.rank_by == "throughput") {
    o.rank_by = predict::RankBy::kThroughput;
  } else if (a.rank_by == "cost") {
    o.rank_by = predict::RankBy::kCost;
  } else {
    throw InputError("--rank-by", fmt::format("unknown ranking \"{}\"", a.rank_by), "throughput or cost");
  }
}

// Refuses what would run for many minutes (kMaxSearchGpus) before the cluster's link graph is built.
void check_search_size(const std::vector<int>& counts, const hw::ClusterSpec& cluster, int nodes) {
  for (const int gpus : counts) {
    if (gpus <= kMaxSearchGpus) continue;
    const std::string flag = nodes > 0 && counts.size() == 1 ? "--nodes" : "--gpus";
    throw InputError(flag, fmt::format("{} GPUs of {} to search", gpus, cluster.name),
                     fmt::format("at most {} GPUs: the search takes many minutes beyond that; predict one plan "
                                 "at the full size with commscale predict",
                                 kMaxSearchGpus));
  }
}

// The flags besides the plan's that make `predict` simulate what the search simulated.
// `eight_bit`: the best plan is a memory-saving adam8bit one, whose own flags name the optimizer.
std::string predict_flags(const SearchArguments& a, bool eight_bit) {
  std::string out = fmt::format("--cluster {} {}", shell_quoted(a.cluster), model_flags_text(a.model));
  if (!a.optimizer.empty() && !eight_bit) out += fmt::format(" --optimizer {}", a.optimizer);
  if (a.nodes > 0) out += fmt::format(" --nodes {}", a.nodes);
  if (!a.calibration.empty()) out += fmt::format(" --calibration {}", shell_quoted(a.calibration));
  for (const std::string& item : a.set) out += fmt::format(" --set {}", shell_quoted(item));
  if (a.workspace_gib != 2.0) out += fmt::format(" --workspace-gib {:g}", a.workspace_gib);
  if (!a.framework.empty()) out += fmt::format(" --framework {}", shell_quoted(a.framework));
  return out;
}

// The search's own flags that a plan file's plan can give: the batch, and what every plan shares.
void merge_search_plan_file(SearchArguments& a) {
  merge_plan_file(a.model);
  merge_plan_file_cluster(a.model, &a.cluster, &a.nodes, &a.set);
  if (!a.model.loaded_plan) return;
  const PlanFileFields& p = a.model.loaded_plan->plan;
  predict::SearchOptions& o = a.options;
  const auto take = [&](const char* flag, const auto& value, auto& field) {
    if (!value) return;
    if (option_given(a.model.command, flag)) {
      a.model.over_file.push_back(flag);
    } else {
      field = *value;
    }
  };
  take("--global-batch", p.global_batch, o.global_batch);
  take("--flash-attn", p.flash_attn, o.flash_attention);
  take("--kernels", p.kernels, a.kernels);
  take("--order", p.order, o.order);
}

// The best plan as a plan file (parallel/plan_file.hpp), with the cluster and overrides searched.
void write_best_plan(const SearchArguments& a, const TransformerConfig& model, const predict::SearchResult& r) {
  if (a.best_plan_path.empty() || r.ranked.empty()) return;
  const ParallelPlan& best = r.ranked.front().estimate.plan;
  const std::string cluster =
      hw::looks_like_path(a.cluster) ? std::filesystem::absolute(a.cluster).lexically_normal().string() : a.cluster;
  const std::string note = fmt::format("the best plan of `commscale search` ({:.0f} tokens/s predicted): {}",
                                       r.ranked.front().estimate.tokens_per_s, a.command_line);
  const nlohmann::ordered_json doc = plan_file_json(model, best, world_size(best), cluster, a.nodes, a.set, note);
  write_file_atomically(a.best_plan_path, json_text(nlohmann::json(doc), 2));
}

int run_search(SearchArguments& a) {
  merge_search_plan_file(a);
  if (a.cluster.empty()) throw InputError("--cluster", "missing", "a cluster, or a --plan-file with one");
  if (a.options.global_batch == 0) {
    throw InputError("--global-batch", "missing", "sequences per step, or a --plan-file with them");
  }
  const std::vector<hw::Override> overrides = hw::parse_overrides(a.set, "--set");
  TransformerConfig model = finish_model_options(a.model);
  finish_output_options(a.output, {{"--best-plan-file", a.best_plan_path}});
  check_options(a);
  validate_fp8_dispatch(model, a.options.fp8, a.options.fp8_dispatch);
  check_nodes_option(a.nodes_flag, a.nodes);
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  const hw::ClusterSpec cluster = catalog.cluster(a.cluster, "--cluster", overrides);
  predict::TrainingChoices choices = training_choices(a.model, model.dtype, a.options.flash_attention);
  choices.fp8 = a.options.fp8;
  std::vector<std::string> notes = cluster.what_if_notes;
  for (std::string& note : predict::fit_to_gpu(cluster.gpu, choices)) notes.push_back(std::move(note));
  model.dtype = choices.dtype;
  a.options.flash_attention = choices.flash_attention;
  const auto calibration = load_calibration_option(a.calibration, catalog);
  // One target per node count, one evaluator per GPU count.
  std::vector<int> counts = a.gpus.empty() ? std::vector<int>{} : parse_gpu_counts(a.gpus);
  if (counts.empty()) counts.push_back(cluster.gpus_per_node() * (a.nodes > 0 ? a.nodes : 1));
  check_search_size(counts, cluster, a.nodes);
  std::vector<std::unique_ptr<predict::Target>> targets;
  std::vector<std::unique_ptr<predict::PlanEvaluator>> evaluators;
  std::vector<predict::PlanEvaluator*> pointers;
  int most_nodes = 1;
  for (const int gpus : counts) {
    const int nodes = a.nodes > 0 ? a.nodes : predict::nodes_for(cluster, gpus, "--gpus");
    most_nodes = std::max(most_nodes, nodes);
    targets.push_back(std::make_unique<predict::Target>(predict::make_target(
        catalog, cluster, nodes, calibration,
        resolve_host_framework(a.host_framework, a.options.framework, a.options.kernels, calibration.get()))));
    if (gpus > targets.back()->gpus()) {
      throw InputError(
          "--gpus", fmt::format("{}", gpus),
          fmt::format("at most the {} GPUs of {} node(s) of {}", targets.back()->gpus(), nodes, cluster.name));
    }
    evaluators.push_back(std::make_unique<predict::PlanEvaluator>(model, *targets.back(), a.options.memory, gpus));
    pointers.push_back(evaluators.back().get());
  }
  Progress progress(progress_enabled(false) ? &std::cerr : nullptr, "search", 0);
  progress.update(0,
                  fmt::format("{} GPUs of {}: ranking every plan with the stage model", counts.back(), cluster.name));
  predict::SearchResult r = predict::search_plans(pointers, a.options);
  progress.finish();
  r.notes.insert(r.notes.begin(), notes.begin(), notes.end());
  const std::vector<std::string> warnings =
      predict::unused_override_warnings(overrides, "this search", cluster.name, most_nodes);
  nlohmann::json doc = predict::search_to_json(r, a.options);
  doc["model"] = model.name;
  doc["command_line"] = a.command_line;
  doc["context"] = inputs_context(a.model, overrides);
  doc["warnings"] = warnings;
  write_best_plan(a, model, r);
  if (emit_json(a.output, doc)) {
    std::cout << inputs_line(a.model, overrides);
    for (const std::string& w : warnings) std::cout << "warning  " << w << "\n";
    const bool eight_bit = !r.ranked.empty() && r.ranked.front().estimate.plan.optimizer == Optimizer::kAdam8bit &&
                           a.options.optimizer != Optimizer::kAdam8bit;
    predict::print_search(std::cout, r, a.options, predict_flags(a, eight_bit));
  }
  return static_cast<int>(r.ranked.empty() ? ExitCode::kCheckFailed : ExitCode::kOk);
}

}  // namespace

void add_search_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<SearchArguments>();
  args->command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "search",
      "Every valid plan (dp, tp, pp, sp, ZeRO, recompute, micro-batch, schedule, chunks) of a model on a "
      "cluster, ranked by throughput or cost, with the top K and why the others lose (no GPU needed)");
  add_model_options(*cmd, &args->model);
  predict::SearchOptions& o = args->options;
  mark_input_file(cmd->add_option("--cluster", args->cluster,
                                  "a cluster of topologies/clusters (commscale hw list) or a cluster file (required "
                                  "unless the --plan-file has one)"));
  add_set_option(*cmd, &args->set);
  mark_output_file(cmd->add_option("--best-plan-file", args->best_plan_path,
                                   "write the best plan as a plan file (for --plan-file of plan, train, predict)"));
  args->nodes_flag =
      cmd->add_option("--nodes", args->nodes, "nodes of the cluster (default: as many as --gpus needs, else 1)");
  cmd->add_option("--gpus", args->gpus, "GPU counts to search, comma-separated (default: all GPUs of --nodes)");
  cmd->add_option("--global-batch,--global-batch-size", o.global_batch,
                  "sequences per step over all replicas (required unless the --plan-file has it)");
  cmd->add_option("--max-micro-batch", o.max_micro_batch, "largest micro-batch tried (powers of two)")
      ->capture_default_str();
  cmd->add_option("--max-chunks", o.max_chunks, "most model chunks per stage of the interleaved schedule")
      ->capture_default_str();
  add_threads_option(*cmd, &o.threads);
  o.flash_attention = true;  // every current training recipe uses it
  cmd->add_flag("--flash-attn,--use-flash-attn,!--no-flash-attn", o.flash_attention,
                "every plan uses fused (flash) attention (the default; --no-flash-attn: none does)");
  cmd->add_option("--kernels", args->kernels, "every plan with fused (Megatron-LM's) or eager (PyTorch's) kernels")
      ->capture_default_str();
  cmd->add_option("--order", o.order, "rank order of the parallel dimensions, fastest first")->capture_default_str();
  add_context_parallel_options(*cmd, &o);
  add_expert_tensor_parallel_option(*cmd, &o);
  cmd->add_option("--optimizer", args->optimizer,
                  "every plan's optimizer: adam, adamw, adam8bit, sgd or none (default: the framework's)");
  add_lora_options(*cmd, &args->model, "Options");
  add_fp8_option(*cmd, &args->model, "Options");
  cmd->add_flag("--memory-saving,!--no-memory-saving", o.memory_saving,
                "when no plan fits, try adam8bit states, then optimizer, parameter and activation offload to host "
                "memory (the default; --no-memory-saving: only plans as asked)");
  cmd->add_option("--rank-by", args->rank_by, "throughput or cost (USD per million tokens)")->capture_default_str();
  cmd->add_option("--top", o.top, "plans listed")->capture_default_str();
  add_cost_options(*cmd, &o.costs, &args->costs);
  add_real_option(*cmd, "--price", &args->node_price_usd,
                  "price of one whole node in USD (implies --cost-basis system; default: the node's parts at "
                  "catalog prices)",
                  node_price_range());
  add_real_option(*cmd, "--usd-per-gpu-hour", &args->usd_per_gpu_hour,
                  "rental price per GPU-hour (--cost-basis cloud; default: the GPU file's)", node_price_range());
  mark_input_file(
      cmd->add_option("--calibration", args->calibration, "a calibration profile (commscale calibrate) to use"));
  add_host_framework_option(*cmd, &args->host_framework);
  add_framework_option(*cmd, &args->framework);
  add_real_option(*cmd, "--workspace-gib", &args->workspace_gib, "memory allowance per rank beyond the model's",
                  workspace_gib_range())
      ->capture_default_str();
  add_output_options(*cmd, &args->output);
  cmd->callback([args, action] { *action = [args] { return run_search(*args); }; });
}

}  // namespace commscale

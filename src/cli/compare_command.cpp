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
#include "cli/model_options.hpp"
#include "cli/number_options.hpp"
#include "cli/predict_options.hpp"
#include "core/error.hpp"
#include "hw/topology_dir.hpp"
#include "predict/compare.hpp"
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
  std::vector<std::string> prices;
  std::string scaling;
  std::string calibration;
  std::string kernels = "fused";
  double workspace_gib = 2.0;
  predict::CompareInputs inputs;
  OutputArguments output;
  std::string command_line;
};

std::map<std::string, double> parse_prices(const std::vector<std::string>& items) {
  std::map<std::string, double> out;
  for (const std::string& item : items) {
    for (const std::string& one : split_list(item, "--price")) {
      const std::size_t eq = one.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw InputError("--price", fmt::format("\"{}\"", one), "CLUSTER=USD, the price of one node");
      }
      const std::string cluster = one.substr(0, eq);
      out[cluster] = parse_real(one.substr(eq + 1), fmt::format("--price {}", cluster), node_price_range());
    }
  }
  return out;
}

// A --price must name a cluster being compared: else it is a typo that silently changes nothing.
void check_prices(const predict::CompareInputs& in, const hw::Catalog& catalog) {
  std::set<std::string> names;
  for (const predict::ClusterChoice& c : in.clusters) names.insert(catalog.cluster(c.cluster, "--clusters").name);
  if (in.scaling) names.insert(catalog.cluster(in.scaling->cluster, "--scaling").name);
  for (const auto& [cluster, usd] : in.node_prices) {
    if (!names.contains(cluster)) {
      throw InputError("--price", fmt::format("\"{}\" is not a cluster of --clusters or --scaling", cluster),
                       "CLUSTER=USD for a cluster being compared");
    }
  }
}

int run_compare(CompareArguments& a) {
  predict::CompareInputs& in = a.inputs;
  in.model = finish_model_options(a.model);
  in.search.kernels = parse_kernel_set(a.kernels, "--kernels");
  finish_output_options(a.output);
  const predict::SearchOptions& o = in.search;
  if (o.global_batch < 1) throw InputError("--global-batch", fmt::format("{}", o.global_batch), "a positive number");
  // Each size of the sweep is a plan search: bounded as search's are, before any is started.
  if (in.scaling_max_gpus < 1 || in.scaling_max_gpus > kMaxSearchGpus) {
    throw InputError("--scaling-max", fmt::format("{} GPUs", in.scaling_max_gpus),
                     fmt::format("1 to {}, the most a plan search takes", kMaxSearchGpus));
  }
  in.search.memory.workspace = gib_to_bytes(a.workspace_gib);
  in.node_prices = parse_prices(a.prices);
  for (const std::string& label : split_list(a.clusters, "--clusters")) {
    if (std::find(in.labels.begin(), in.labels.end(), label) != in.labels.end()) {
      throw InputError("--clusters", fmt::format("\"{}\" is given twice", label), "each cluster once");
    }
    in.clusters.push_back(predict::parse_cluster_choice(label, "--clusters"));
    in.labels.push_back(label);
  }
  if (!a.scaling.empty()) in.scaling = predict::parse_cluster_choice(a.scaling, "--scaling");
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  check_prices(in, catalog);
  in.calibration = load_calibration_option(a.calibration, catalog);
  Progress progress(progress_enabled(false) ? &std::cerr : nullptr, "compare", 0);
  const predict::CompareResult r =
      predict::compare_clusters(catalog, in, [&](std::size_t done, std::size_t total, const std::string& next) {
        progress.set_total(total);
        progress.update(done, fmt::format("searching {}", next));
      });
  progress.finish();
  nlohmann::json doc = predict::compare_to_json(r, in);
  doc["command_line"] = a.command_line;
  if (emit_json(a.output, doc)) predict::print_compare(std::cout, r, in);
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
  cmd->add_option("--clusters", args->clusters, "clusters to compare, CLUSTER or CLUSTER:GPUS, comma-separated")
      ->capture_default_str();
  cmd->add_option("--global-batch", o.global_batch, "sequences per step over all replicas")->required();
  add_real_option(*cmd, "--years", &o.costs.years, "years the purchase price is amortized over", years_range())
      ->capture_default_str();
  add_real_option(*cmd, "--usd-per-kwh", &o.costs.usd_per_kwh, "energy price, USD per kWh", usd_per_kwh_range())
      ->capture_default_str();
  cmd->add_option("--price", args->prices,
                  "CLUSTER=USD: price of one node (data-centre GPUs have no list price; default: the cluster's)");
  cmd->add_option("--scaling", args->scaling, "also sweep this cluster from 1 GPU up (CLUSTER)");
  cmd->add_option("--scaling-max", args->inputs.scaling_max_gpus, "largest GPU count of the sweep")
      ->capture_default_str();
  cmd->add_option("--max-micro-batch", o.max_micro_batch, "largest micro-batch tried (powers of two)")
      ->capture_default_str();
  cmd->add_flag("--flash-attn", o.flash_attention, "every plan uses fused (flash) attention");
  cmd->add_option("--kernels", args->kernels, "every plan with fused (Megatron-LM's) or eager (PyTorch's) kernels")
      ->capture_default_str();
  cmd->add_option("--calibration", args->calibration, "a calibration profile (commscale calibrate) to use");
  add_real_option(*cmd, "--workspace-gib", &args->workspace_gib, "memory allowance per rank beyond the model's",
                  workspace_gib_range())
      ->capture_default_str();
  add_output_options(*cmd, &args->output);
  cmd->callback([args, action] { *action = [args] { return run_compare(*args); }; });
}

}  // namespace commscale

// `commscale predict --collective`: a collective's predicted sweep (cli/predict_collective.hpp).

#include "cli/predict_collective.hpp"

#include <cstdint>
#include <iostream>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/traffic_options.hpp"
#include "core/error.hpp"
#include "core/size.hpp"
#include "hw/topology_dir.hpp"
#include "predict/collective_sweep.hpp"
#include "predict/target.hpp"
#include "report/collective_prediction_report.hpp"

namespace commscale {
namespace {

std::vector<Collective> parse_collectives(const std::string& text) {
  std::vector<Collective> out;
  for (const std::string& item : split_list(text, "--collective")) {
    if (item == "all") {
      out.assign(all_collectives().begin(), all_collectives().end());
      return out;
    }
    out.push_back(parse_collective(item, "--collective"));
  }
  return out;
}

predict::CollectiveSweepRequest request_of(const CollectiveArguments& a) {
  predict::CollectiveSweepRequest r;
  r.collectives = parse_collectives(a.collectives);
  if (a.step_factor < 2) throw InputError("-f/--stepfactor", fmt::format("{}", a.step_factor), "2 or more");
  r.sizes = size_sweep(parse_size(a.min_bytes, "-b/--minbytes"), parse_size(a.max_bytes, "-e/--maxbytes"),
                       static_cast<std::uint64_t>(a.step_factor), Bytes(0));
  r.dtype = parse_data_type(a.dtype, "-d/--datatype");
  if (a.ranks < 0 || a.ranks == 1) {
    throw InputError("--ranks", fmt::format("{}", a.ranks), "2 or more ranks in the group (default: every GPU)");
  }
  r.ranks = a.ranks;
  TrafficFlags traffic = parse_traffic_flags(a.matrix, a.routing, r.collectives, "--collective alltoallv");
  r.matrix = std::move(traffic.matrix);
  r.routing = std::move(traffic.routing);
  return r;
}

}  // namespace

void add_collective_options(CLI::App& cmd, CollectiveArguments* a) {
  const std::string group = "Collective";
  cmd.add_option("--collective", a->collectives,
                 "predict this collective over a size sweep instead of a training step: all_reduce, all_gather, "
                 "reduce_scatter, broadcast, reduce, alltoall, alltoallv, sendrecv, a comma list, or all (all but "
                 "alltoallv)")
      ->group(group);
  a->sweep_flags = {
      cmd.add_option("-b,--minbytes", a->min_bytes, "with --collective: smallest size (K, M, G: powers of 1024)")
          ->capture_default_str()
          ->group(group),
      cmd.add_option("-e,--maxbytes", a->max_bytes, "with --collective: largest size")
          ->capture_default_str()
          ->group(group),
      cmd.add_option("-f,--stepfactor", a->step_factor, "with --collective: multiply the size by this between rows")
          ->capture_default_str()
          ->group(group),
      cmd.add_option("-d,--datatype", a->dtype, "with --collective: element type, for bench's rounding of chunks")
          ->capture_default_str()
          ->group(group),
      cmd.add_option("--matrix", a->matrix, "with --collective alltoallv: its traffic matrix file (as bench's)")
          ->group(group),
      cmd.add_option("--routing", a->routing,
                     "with --collective alltoallv: a MoE router's traffic, experts=E,top-k=K[,imbalance=F|gini=G]...")
          ->group(group),
      cmd.add_option("--ranks", a->ranks,
                     "with --collective: ranks in the group, 0 .. N-1 node by node (default: every GPU of --nodes)")
          ->group(group),
  };
}

void check_predict_mode(const CollectiveArguments& a, const CLI::App& cmd,
                        const std::vector<const CLI::Option*>& step_only) {
  if (a.collectives.empty()) {
    for (const CLI::Option* o : a.sweep_flags) {
      if (o->count() > 0) {
        throw InputError(o->get_name(), "is a flag of --collective", "--collective NAME with it, or no " + o->get_name());
      }
    }
    return;
  }
  std::vector<const CLI::Option*> others = step_only;
  for (const CLI::Option* o : cmd.get_options()) {
    if (o->get_group() == "Model" || o->get_group() == "Parallel plan") others.push_back(o);
  }
  for (const CLI::Option* o : others) {
    if (o->count() > 0) {
      throw InputError(o->get_name(), "predicts a training step, and --collective predicts one collective",
                       "either --collective or the model and plan flags");
    }
  }
}

int run_predict_collective(const CollectiveArguments& a, const CollectiveRun& run) {
  const predict::CollectiveSweepRequest request = request_of(a);
  finish_output_options(run.output);
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  const std::vector<hw::Override> overrides = hw::parse_overrides(run.set, "--set");
  const hw::ClusterSpec cluster = catalog.cluster(run.cluster, "--cluster", overrides);
  if (run.nodes < 0) throw InputError("--nodes", fmt::format("{}", run.nodes), "a positive number of nodes");
  const int nodes = run.nodes > 0                ? run.nodes
                    : request.ranks > 0 ? predict::nodes_for(cluster, request.ranks, "--ranks")
                                        : 1;
  predict::check_all_to_all_ranks(request, request.ranks > 0 ? std::int64_t{request.ranks}
                                                              : std::int64_t{nodes} * cluster.gpus_per_node());
  const predict::Target target =
      predict::make_target(catalog, cluster, nodes, load_calibration_option(run.calibration, catalog));
  if (request.ranks == 0 && target.gpus() < 2) {
    throw InputError("--cluster", fmt::format("{} on {} node(s) has one GPU: no collective to predict", cluster.name, nodes),
                     "a cluster or --nodes with two GPUs or more");
  }
  const predict::CollectiveSweepPrediction p = predict::predict_collective_sweep(target, request);
  nlohmann::json doc = predict::collective_prediction_to_json(target, p);
  doc["command_line"] = run.command_line;
  if (!overrides.empty()) doc["context"]["overrides"] = hw::overrides_json(overrides);
  if (emit_json(run.output, doc)) {
    if (!overrides.empty()) std::cout << fmt::format("inputs   what-if {}\n", hw::overrides_text(overrides));
    predict::print_collective_prediction(std::cout, target, p);
  }
  return static_cast<int>(ExitCode::kOk);
}

}  // namespace commscale

#include "cli/plan_file_options.hpp"

#include <fmt/format.h>

#include "cli/option_rules.hpp"

namespace commscale {

void add_plan_file_option(CLI::App& command, ModelPlanArguments* args) {
  mark_input_file(command
                      .add_option("--plan-file", args->plan_file,
                                  "a plan file (JSON: model, plan, cluster); flags given beside it override its values")
                      ->group("Model"));
}

void merge_plan_file(ModelPlanArguments& a) {
  if (a.plan_file.empty() || a.loaded_plan) return;
  a.loaded_plan = load_plan_file(a.plan_file);
  a.over_file = flags_over_plan_file(plan_request(a));
}

void merge_plan_file_cluster(const ModelPlanArguments& a, std::string* cluster, int* nodes,
                             std::vector<std::string>* set) {
  if (!a.loaded_plan) return;
  const PlanFile& f = *a.loaded_plan;
  if (cluster != nullptr && cluster->empty()) *cluster = f.cluster;
  if (nodes != nullptr && *nodes == 0) *nodes = f.nodes;
  // The file's what-if overrides come first: a --set of the same key on the command line wins.
  if (set != nullptr) set->insert(set->begin(), f.set.begin(), f.set.end());
}

nlohmann::json inputs_context(const ModelPlanArguments& a, const std::vector<hw::Override>& overrides) {
  nlohmann::json out = nlohmann::json::object();
  if (a.loaded_plan) {
    out["plan_file"] = a.loaded_plan->path;
    out["flags_over_plan_file"] = a.over_file;
    out["precedence"] = "flags given override the plan file; the plan file overrides the flags' defaults";
  }
  if (!overrides.empty()) out["overrides"] = hw::overrides_json(overrides);
  return out;
}

std::string inputs_line(const ModelPlanArguments& a, const std::vector<hw::Override>& overrides) {
  std::string out;
  if (a.loaded_plan) {
    out += fmt::format("plan file {}", a.loaded_plan->path);
    if (!a.over_file.empty()) {
      std::string flags;
      for (const std::string& f : a.over_file) flags += fmt::format("{}{}", flags.empty() ? "" : ", ", f);
      out += fmt::format(" (overridden by the flags given: {})", flags);
    }
  }
  if (!overrides.empty()) out += fmt::format("{}what-if {}", out.empty() ? "" : "; ", hw::overrides_text(overrides));
  return out.empty() ? out : fmt::format("inputs   {}\n", out);
}

void add_set_option(CLI::App& command, std::vector<std::string>* items) {
  command.add_option("--set", *items,
                     "what-if KEY=VALUE on the cluster or its GPU, keys as in the topology JSON "
                     "(network.nic_rate_Gbps=400, node.gpus=4, gpu.memory_GiB=48, node.links[0].bw_GBps=50); "
                     "repeatable");
}

}  // namespace commscale

#pragma once

// --plan-file FILE for plan, train, predict, search and compare (parallel/plan_file.hpp), and the
// record of a command's inputs in its outputs: the plan file, the flags that overrode it, and the
// what-if overrides (--set).
//
// Precedence (parallel/plan_request.hpp applies it): a flag given on the command line wins over the plan
// file's value for it; the file's value wins over the flag's default. A model flag (--model, --model-file,
// --hf-config) replaces the file's model; the model's shape flags (--layers, ...) override fields of
// whichever model is used.

#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/model_options.hpp"
#include "hw/overrides.hpp"

namespace commscale {

void add_plan_file_option(CLI::App& command, ModelPlanArguments* args);

// Reads --plan-file (when given) into the arguments, and which flags given override its values. Call first
// in a command's run. Throws InputError naming the file and key.
void merge_plan_file(ModelPlanArguments& args);

// The plan file's cluster, node count and --set items, taken where the command's own flags gave none.
void merge_plan_file_cluster(const ModelPlanArguments& args, std::string* cluster, int* nodes,
                             std::vector<std::string>* set);

// {"plan_file": PATH, "flags_over_plan_file": [...], "overrides": [...]} (keys present when they apply).
[[nodiscard]] nlohmann::json inputs_context(const ModelPlanArguments& args, const std::vector<hw::Override>& overrides);
// One line saying the same for text output ("" when there is nothing to say).
[[nodiscard]] std::string inputs_line(const ModelPlanArguments& args, const std::vector<hw::Override>& overrides);

// --set KEY=VALUE (repeatable) for commands that take a cluster.
void add_set_option(CLI::App& command, std::vector<std::string>* items);

}  // namespace commscale

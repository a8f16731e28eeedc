// `commscale diff-trace A.json B.json`: per-step, per-stream, per-op-kind and per-op differences
// between two timelines of one step program (program/timeline_diff.hpp): measured against predicted,
// or any two. The program comes from --program (a `plan --dump-program` file) or from the model and
// plan flags, as `predict` and `train` build it. Pure. Exit codes: 0; 2 bad input.

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "cli/option_rules.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/predict_options.hpp"
#include "core/error.hpp"
#include "hw/json_reader.hpp"
#include "parallel/program_builder.hpp"
#include "program/program_json.hpp"
#include "program/timeline_diff.hpp"
#include "report/timeline_diff_report.hpp"

namespace commscale {
namespace {

struct DiffArguments {
  std::string a;
  std::string b;
  std::string program;
  ModelPlanArguments model_plan;
  int top = 20;
  OutputArguments output;
  std::string command_line;
};

// A timeline file as `predict --timeline` and `train --timeline` write it, or a document holding one
// under "timeline".
Timeline read_timeline(const std::string& path) {
  const nlohmann::json doc = hw::read_json_file(path);
  const nlohmann::json* t = &doc;
  if (doc.is_object() && !doc.contains("events") && doc.contains("timeline")) t = &doc.at("timeline");
  if (!t->is_object() || !t->contains("events")) {
    throw InputError(path, "holds no timeline", "a file from predict --timeline or train --timeline");
  }
  // predict --timeline names its kind; train --timeline writes the bare timeline.
  if (t->contains("kind") && t->at("kind") != "commscale-timeline") {
    throw InputError(path + ": kind", "is not \"commscale-timeline\"", "a timeline's kind, or none");
  }
  if (t->contains("schema_version") && t->at("schema_version") != 1) {
    throw InputError(path + ": schema_version", "is not 1", "the timeline schema this build reads, 1");
  }
  try {
    return t->get<Timeline>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, fmt::format("is not a timeline: {}", e.what()), "engine, world_size, steps and events");
  } catch (const InputError& e) {
    throw InputError(path, e.what());
  }
}

ProgramSet load_program(DiffArguments& a) {
  if (a.program.empty()) {
    merge_plan_file(a.model_plan);
    return build_program(finish_model_plan_options(a.model_plan));
  }
  const nlohmann::json doc = hw::read_json_file(a.program);
  return read_program_set(doc, a.program);
}

int run_diff(DiffArguments& a) {
  if (a.top < 1 || a.top > 100000) throw InputError("--top", fmt::format("{}", a.top), "1 to 100000 rows");
  finish_output_options(a.output);
  const ProgramSet set = load_program(a);
  const Timeline ta = read_timeline(a.a);
  const Timeline tb = read_timeline(a.b);
  const TimelineDiff d = diff_timelines(set, ta, tb, a.a, a.b, static_cast<std::size_t>(a.top));
  nlohmann::json doc = diff_to_json(d);
  doc["a"]["file"] = a.a;
  doc["b"]["file"] = a.b;
  doc["command_line"] = a.command_line;
  if (emit_json(a.output, doc)) print_diff(std::cout, d, static_cast<std::size_t>(a.top));
  return 0;
}

}  // namespace

void add_diff_trace_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<DiffArguments>();
  args->command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "diff-trace",
      "Differences between two timelines of one step program (measured vs predicted, or any two): per "
      "step, per stream, per op kind, per op");
  mark_input_file(cmd->add_option("a", args->a, "timeline A (predict --timeline or train --timeline)")->required());
  mark_input_file(cmd->add_option("b", args->b, "timeline B")->required());
  mark_input_file(cmd->add_option("--program", args->program,
                                  "the step program (plan --dump-program); else the model and plan flags"));
  add_model_plan_options(*cmd, &args->model_plan);
  cmd->add_option("--top", args->top, "op kinds and ops listed")->capture_default_str();
  add_output_options(*cmd, &args->output);
  cmd->callback([args, action] { *action = [args] { return run_diff(*args); }; });
}

}  // namespace commscale

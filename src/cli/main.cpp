// commscale: communication benchmarks, training-step measurement and prediction for LLM clusters.
//
// The command line is parsed and checked before MPI starts, so a usage error is reported once (by
// the process a launcher calls rank 0, or the first of its own command line in an MPMD job, or a
// process on its own) with exit code 2. Subcommands that run on every rank start
// MPI themselves (cli/command.hpp).

#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/option_rules.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "core/version.hpp"

namespace {

int usage_error(const std::string& message) {
  if (commscale::reports_usage_errors()) std::cerr << "commscale: " << message << std::endl;
  commscale::wait_before_usage_exit();
  return static_cast<int>(commscale::ExitCode::kUsage);
}

// The first word when it is neither a flag nor a command: CLI11 would only say "A subcommand is
// required", without the word the user typed or the words it knows.
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string word = argv[1];
  std::string known;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (command->check_name(word)) return std::nullopt;
    known += (known.empty() ? "" : ", ") + command->get_name();
  }
  return fmt::format("unknown command '{}' (expected one of {})", commscale::printable(word), known);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace commscale;
  CLI::App app{"commscale: collective benchmarks and training-step measurement for LLM clusters", "commscale"};
  app.set_version_flag("--version", fmt::format("commscale {} ({})", version(), git_sha()));
  app.require_subcommand(1);
  CommandAction action;
  const std::string command_line = join_command_line(argc, argv);
  add_bench_command(app, &action, command_line);
  add_plan_command(app, &action, command_line);
  add_hw_command(app, &action, command_line);
  add_topo_command(app, &action, command_line);
  add_p2p_command(app, &action, command_line);
  add_train_command(app, &action, command_line);
  add_calibrate_command(app, &action, command_line);
  add_report_command(app, &action, command_line);
  add_predict_command(app, &action, command_line);
  add_search_command(app, &action, command_line);
  add_compare_command(app, &action, command_line);
  add_diff_trace_command(app, &action, command_line);
  add_doctor_command(app, &action, command_line);
  apply_option_rules(app);  // every option's value: not empty; whole numbers in decimal
  // Once every option is read and before any command's callback reads an input: no output is an input.
  // Only rank 0 writes result files (the commands check their outputs there too).
  app.parse_complete_callback([&app] {
    if (launched_as_rank_zero()) check_outputs_are_not_inputs(app);
  });

  if (const std::optional<std::string> unknown = unknown_command(app, argc, argv)) return usage_error(*unknown);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return reports_usage_errors() ? app.exit(e) : 0;
  } catch (const CLI::CallForAllHelp& e) {
    return reports_usage_errors() ? app.exit(e) : 0;
  } catch (const CLI::CallForVersion& e) {
    return reports_usage_errors() ? app.exit(e) : 0;
  } catch (const CLI::ParseError& e) {  // it quotes the arguments: escape them, as InputError does
    return usage_error(fmt::format("{} (see commscale --help)", printable(e.what())));
  } catch (const InputError& e) {  // thrown by our callbacks, which read input files (--model-file)
    return usage_error(e.what());
  } catch (const std::exception& e) {  // CLI11 passes on what is not its own: report it, never abort
    std::cerr << "commscale: unexpected error: " << printable(e.what()) << "\n";
    return static_cast<int>(ExitCode::kRuntime);
  }
  // Commands that start MPI report their own errors (run_on_all_ranks); pure ones land here.
  try {
    return action();
  } catch (const Error& e) {
    std::cerr << "commscale: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "commscale: unexpected error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kRuntime);
  }
}

#pragma once

// What the subcommands share: how they register with the command line, how a command that runs on
// every MPI rank is started and how its failures end the job.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "runtime/mpi.hpp"
#include "runtime/session.hpp"

namespace commscale {

// Set by the subcommand that the command line selected; returns the process exit code.
using CommandAction = std::function<int()>;

void add_bench_command(CLI::App& app, CommandAction* action, const std::string& command_line);
// `plan` is pure: it starts no MPI and returns its exit code.
void add_plan_command(CLI::App& app, CommandAction* action, const std::string& command_line);
void add_hw_command(CLI::App& app, CommandAction* action, const std::string& command_line);
// `topo` and `p2p` run in one process that drives every GPU: they start no MPI.
void add_topo_command(CLI::App& app, CommandAction* action, const std::string& command_line);
void add_p2p_command(CLI::App& app, CommandAction* action, const std::string& command_line);
void add_train_command(CLI::App& app, CommandAction* action, const std::string& command_line);
void add_calibrate_command(CLI::App& app, CommandAction* action, const std::string& command_line);
// `report` is pure: result files in, an HTML page out.
void add_report_command(CLI::App& app, CommandAction* action, const std::string& command_line);
// The predictor's commands are pure (no MPI, no GPU).
void add_predict_command(CLI::App& app, CommandAction* action, const std::string& command_line);
void add_search_command(CLI::App& app, CommandAction* action, const std::string& command_line);
void add_compare_command(CLI::App& app, CommandAction* action, const std::string& command_line);
void add_diff_trace_command(CLI::App& app, CommandAction* action, const std::string& command_line);
// `doctor` runs on every rank: the cluster acceptance test.
void add_doctor_command(CLI::App& app, CommandAction* action, const std::string& command_line);

// Adds --backend and --devices (every command that runs on the ranks takes them).
void add_runtime_options(CLI::App& command, RuntimeOptions* options, std::string* backend_text);
void finish_runtime_options(RuntimeOptions* options, const std::string& backend_text);

// Starts MPI, runs `body` on this rank and maps its failures to exit codes: the rank that failed
// prints one message naming its host and rank, then aborts the whole job so no rank waits forever.
[[nodiscard]] int run_on_all_ranks(const std::function<int(const MpiComm& world)>& body);

// The process's command line, quoted where needed, for result files; bytes that are not UTF-8 (a file
// name may hold any) are written \xNN (core/utf8.hpp).
[[nodiscard]] std::string join_command_line(int argc, char** argv);

// Before MPI starts (cli/launcher_rank.cpp). True unless a launcher says this process is a rank other
// than 0 of a job of several processes: with no launcher, or a rank variable left over from elsewhere
// (no job size beside it, a size of 1, a rank outside the job), the process is on its own and rank 0.
[[nodiscard]] bool launched_as_rank_zero();
// Whether this process prints a usage error (or --help) found before MPI starts: rank 0, and under
// Open MPI's MPMD form the first rank of each command line, which rank 0 does not parse. Every rank of
// one command line finds the same errors, so each is printed once.
[[nodiscard]] bool reports_usage_errors();
// Before a process of a job of several exits with a usage error. A launcher ends the whole job at the
// first non-zero exit, so a rank that exits at once could have a reporting rank killed before it has
// printed: a reporting rank waits 1 s after printing (the first rank of another MPMD command line may
// have started later), any other 5 s, and is ended sooner when the job is. On its own: no wait.
void wait_before_usage_exit();

// Splits "a,b,c" into items; an empty item is an error naming `where`.
[[nodiscard]] std::vector<std::string> split_list(const std::string& text, const std::string& where);

// CUDA device numbers from "0,2,3": each a number, each once; an InputError naming `where` otherwise.
// (Defined in topo_command.cpp.)
[[nodiscard]] std::vector<int> parse_device_list(const std::string& text, const std::string& where);

}  // namespace commscale

#pragma once

// Flags `bench` and `train` share for long and unattended runs: --jsonl, and the testing flag
// --debug-skip-collective that makes one rank skip a collective call (a hung collective on purpose).

#include <string>

#include <CLI/CLI.hpp>

#include "core/fault_injection.hpp"
#include "runtime/mpi.hpp"

namespace commscale {

struct ReliabilityArguments {
  std::string jsonl_path;
  std::string skip;  // RANK:INDEX
};

// Adds --jsonl (`what` says what a line holds) and, in group "Testing", --debug-skip-collective.
void add_reliability_options(CLI::App& command, ReliabilityArguments* args, const std::string& what);

// "RANK:INDEX", both whole numbers, RANK >= 0, INDEX >= 0. Throws InputError naming `where`.
[[nodiscard]] CollectiveSkip parse_collective_skip(const std::string& text, const std::string& where);

// A testing flag that names a rank outside the job would do nothing, and the run would pass as if it
// had been tested: once MPI has started and the world size is known, every rank refuses it (exit 2,
// rank 0 prints the message). `value` is the flag's value as given.
void check_testing_rank(const MpiComm& world, int rank, const std::string& flag, const std::string& value);

// --jsonl as given, else beside -J's file (core/jsonl_file.hpp), else none ("", also when -J names a
// device, FIFO or stream).
[[nodiscard]] std::string resolve_jsonl_path(const ReliabilityArguments& args, const std::string& json_path);

// How messages name the JSON Lines file: "--jsonl", or that it is the default beside -J.
[[nodiscard]] std::string jsonl_flag(const ReliabilityArguments& args);

}  // namespace commscale

#pragma once

// Rules that hold for every option of every command, applied once by main rather than flag by flag
// (where one flag that forgot them would let a bad value through):
//
//  - a value is never empty: `-J ''` or `--gpu $UNSET` is refused, naming the flag, rather than read as
//    the flag left out (an output that silently wrote nothing, a default that silently applied);
//  - whole numbers are decimal: "010" is 10 and "0x10" is refused (CLI11 reads them as C does, octal 8
//    and hex 16);
//  - no output of a command is a file one of its inputs names (the same file once links are followed,
//    core/output_check.hpp): the run would replace what it reads. `calibrate -o FILE --merge` reads and
//    rewrites its profile on purpose: --merge is a switch, not an input option, so it stays allowed.

#include <CLI/CLI.hpp>

namespace commscale {

// Marks an option whose value is a file the command writes.
CLI::Option* mark_output_file(CLI::Option* option);
// Marks an option whose value (or each value) is a file the command reads, or a name that may be one
// (--cluster, --gpu: a catalog name or a file).
CLI::Option* mark_input_file(CLI::Option* option);

// Before parsing: gives every option of `app` and its commands the value rules above.
void apply_option_rules(CLI::App& app);

// Once the command line is read, before the commands' callbacks (which read their inputs) and before
// anything runs: throws InputError naming both flags when an output given to the command is a file one
// of its inputs names.
void check_outputs_are_not_inputs(const CLI::App& app);

}  // namespace commscale

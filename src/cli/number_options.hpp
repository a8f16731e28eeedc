#pragma once

// Float flags: every one is finite and within its range, or the run stops before anything starts
// with exit code 2 and a message naming the flag. A `< 0` check lets NaN through (every comparison
// with NaN is false) and infinity or 1e30 overflow the integer a size is converted to, so the check
// is made once, here, as the value is parsed, for every float option of the command line.

#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "core/units.hpp"

namespace commscale {

// What a float flag accepts: min to max, both included unless `above_min` (then more than min).
struct RealRange {
  double min = 0.0;
  double max = 0.0;
  std::string expected;  // what the message says would be accepted, e.g. "0 to 1048576 GiB"
  std::string unit;      // appended to the value in the message, e.g. " s"
  bool above_min = false;
};

// `text` as a finite number within `range`; an InputError naming `where` otherwise ("nan", "inf",
// "1e999", "12x" and out-of-range values alike).
[[nodiscard]] double parse_real(std::string_view text, std::string_view where, const RealRange& range);
// The same test for a value inside a longer argument ("450:NV18"): nullopt where parse_real throws.
[[nodiscard]] std::optional<double> real_within(std::string_view text, const RealRange& range);

// Adds a float option checked by parse_real as the command line is parsed (the InputError it throws
// leaves CLI11's parse and is reported once by main). `names` as CLI11 takes them ("-T,--timeout");
// messages name the flag as "-T/--timeout".
CLI::Option* add_real_option(CLI::App& command, const std::string& names, double* target,
                             const std::string& description, RealRange range);

// Ranges shared by several commands.
[[nodiscard]] RealRange workspace_gib_range();  // --workspace-gib: 0 to 1048576 GiB
[[nodiscard]] RealRange timeout_s_range();      // -T/--timeout: 0 (none) to 1e6 s
[[nodiscard]] RealRange wait_report_s_range();  // --wait-report: 0 (never) to 1e6 s
[[nodiscard]] RealRange years_range();          // --years: more than 0, at most 100
[[nodiscard]] RealRange usd_per_kwh_range();    // --usd-per-kwh: 0 to 1000
[[nodiscard]] RealRange node_price_range();     // a node's price: more than 0 USD, at most 1e12

// The most GPUs a plan search (search --nodes/--gpus, compare --scaling-max) takes: the stage model's
// search grows faster than the GPU count (42 s for 65,536 GPUs, 140 s for 131,072 on a loaded 2-core
// machine), and the largest cluster the flags accept has 524,288.
inline constexpr int kMaxSearchGpus = 65536;

// The most iterations a count flag takes (bench -n/-w/-c/-G, p2p -n/-w/--copies, calibrate -n): a
// million runs for minutes at the smallest size, and a sample is kept per timed iteration.
inline constexpr int kMaxIterations = 1000000;

// `value` from `min` to `max`, else an InputError naming `flag`, the value and `what` it counts
// ("-n/--iters: 2147483647 iterations (expected at most 1000000)").
void check_count(int value, int min, int max, const char* flag, const char* what);

// --nodes of predict and search: left out (0), the command chooses; given, it must be 1 or more
// (`--nodes 0` is refused rather than read as "left out"). `option` is the flag as add_option made it.
void check_nodes_option(const CLI::Option* option, int nodes);

// A size given in GiB by a flag that add_real_option checked (finite, at most workspace_gib_range's).
[[nodiscard]] Bytes gib_to_bytes(double gib);

}  // namespace commscale

#pragma once

// `commscale predict --collective NAME`: one collective (or several) predicted over bench's size sweep
// on a cluster, instead of a training step. Its flags (group "Collective") are bench's: -b, -e, -f, -d,
// and --ranks for the group size.

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/predict_options.hpp"

namespace commscale {

struct CollectiveArguments {
  std::string collectives;  // empty: predict a training step
  std::string min_bytes = "8";
  std::string max_bytes = "4G";
  std::int64_t step_factor = 2;  // signed, so that -f -1 is refused rather than wrapped
  std::string dtype = "fp32";
  int ranks = 0;
  std::string matrix;                     // alltoallv's traffic matrix file
  std::string routing;                    // or its routing
  std::vector<CLI::Option*> sweep_flags;  // the flags that only --collective takes
};

void add_collective_options(CLI::App& command, CollectiveArguments* args);

// What the collective mode shares with the step mode of predict.
struct CollectiveRun {
  std::string cluster;
  int nodes = 0;
  std::string calibration;
  std::vector<std::string> set;  // --set KEY=VALUE (hw/overrides.hpp)
  OutputArguments output;
  std::string command_line;
};

// Checks that no flag of the other mode was given: `step_only` are predict's flags that --collective
// does not take. Throws InputError naming the flag.
void check_predict_mode(const CollectiveArguments& args, const CLI::App& command,
                        const std::vector<const CLI::Option*>& step_only);

[[nodiscard]] int run_predict_collective(const CollectiveArguments& args, const CollectiveRun& run);

}  // namespace commscale

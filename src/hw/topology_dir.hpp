#pragma once

// Where the topologies directory is, in this order: $COMMSCALE_TOPOLOGIES; beside the executable
// (<exe>/../../topologies in the build tree, where the executable is build/src/commscale;
// <exe>/../share/commscale/topologies when installed); the source tree's topologies/ recorded at
// configure time. A directory counts when it holds sources.json.

#include <filesystem>
#include <optional>
#include <vector>

namespace commscale::hw {

// Throws InputError when $COMMSCALE_TOPOLOGIES is set but is no topologies directory (a typo there
// should not silently fall back to another catalog), or when no candidate is one.
[[nodiscard]] std::filesystem::path find_topologies_dir();

// The candidates after the environment variable, in order, for an executable at `exe`.
[[nodiscard]] std::vector<std::filesystem::path> topologies_dir_candidates(const std::filesystem::path& exe);

// Whether `dir` looks like a topologies directory.
[[nodiscard]] bool is_topologies_dir(const std::filesystem::path& dir);

}  // namespace commscale::hw

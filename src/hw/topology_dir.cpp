#include "hw/topology_dir.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"

// Set for this file only by src/CMakeLists.txt: the source tree's topologies directory.
#ifndef COMMSCALE_TOPOLOGIES_SOURCE_DIR
#define COMMSCALE_TOPOLOGIES_SOURCE_DIR ""
#endif

namespace commscale::hw {
namespace {

std::filesystem::path this_executable() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe;
}

}  // namespace

bool is_topologies_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  return !dir.empty() && std::filesystem::is_regular_file(dir / "sources.json", ec);
}

std::vector<std::filesystem::path> topologies_dir_candidates(const std::filesystem::path& exe) {
  std::vector<std::filesystem::path> out;
  if (!exe.empty()) {
    const std::filesystem::path bin = exe.parent_path();
    out.push_back((bin / ".." / ".." / "topologies").lexically_normal());
    out.push_back((bin / ".." / "share" / "commscale" / "topologies").lexically_normal());
  }
  const std::filesystem::path source(COMMSCALE_TOPOLOGIES_SOURCE_DIR);
  if (!source.empty()) out.push_back(source);
  return out;
}

std::filesystem::path find_topologies_dir() {
  if (const char* env = std::getenv("COMMSCALE_TOPOLOGIES"); env != nullptr && *env != '\0') {
    if (!is_topologies_dir(env)) {
      throw InputError("COMMSCALE_TOPOLOGIES", fmt::format("\"{}\" has no sources.json", env),
                       "the topologies directory of commscale (or unset it)");
    }
    return env;
  }
  const std::vector<std::filesystem::path> candidates = topologies_dir_candidates(this_executable());
  for (const std::filesystem::path& dir : candidates) {
    if (is_topologies_dir(dir)) return dir;
  }
  std::string tried;
  for (const std::filesystem::path& dir : candidates) tried += (tried.empty() ? "" : ", ") + dir.string();
  throw InputError("topologies", fmt::format("not found (looked in {})", tried.empty() ? "nothing" : tried),
                   "$COMMSCALE_TOPOLOGIES set to commscale's topologies directory");
}

}  // namespace commscale::hw

#include "core/written_files.hpp"

#include <mutex>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace commscale {
namespace {

struct Written {
  std::string path;
  bool lines = false;  // a JSON Lines file
  std::uint64_t count = 0;
};

struct Ledger {
  std::mutex mutex;
  std::vector<Written> files;

  Written& entry(const std::string& path, bool lines) {
    for (Written& w : files) {
      if (w.path == path && w.lines == lines) return w;
    }
    return files.emplace_back(Written{path, lines, 0});
  }
};

// Never destroyed: a FileRewriter's thread may still note a write while the process exits.
Ledger& ledger() {
  static Ledger& instance = *new Ledger;
  return instance;
}

}  // namespace

void note_file_written(const std::string& path) {
  const std::lock_guard<std::mutex> lock(ledger().mutex);
  ++ledger().entry(path, false).count;
}

void note_line_appended(const std::string& path) {
  const std::lock_guard<std::mutex> lock(ledger().mutex);
  ++ledger().entry(path, true).count;
}

std::string describe_written_files() {
  const std::lock_guard<std::mutex> lock(ledger().mutex);
  std::vector<std::string> names;
  for (const Written& w : ledger().files) {
    names.push_back(w.lines ? fmt::format("{} ({} whole line{})", w.path, w.count, w.count == 1 ? "" : "s") : w.path);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace commscale

#include "core/output_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/output_path.hpp"

namespace commscale {
namespace {

constexpr std::string_view kExpected = "a file path";

// The nearest directory of `directory` or above it that exists: a file will be made in it, or the
// directories below it. Returns errno of the lookup that failed (0: found), and the path in `found`; a
// symbolic link to nothing on the way is found too (ENOENT): no directory can be made through it.
int nearest_existing(std::string directory, std::string* found) {
  struct stat st{};
  while (::stat(directory.c_str(), &st) != 0) {
    if (errno != ENOENT) return errno;
    if (::lstat(directory.c_str(), &st) == 0) {
      *found = directory;
      return ENOENT;
    }
    const std::string up = directory_of(directory);
    if (up == directory) return ENOENT;
    directory = up;
  }
  *found = directory;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

void check_new_file(const OutputTarget& t, const std::string& path, std::string_view where) {
  const std::string directory = directory_of(t.path);
  std::string existing;
  int error = nearest_existing(directory, &existing);
  if (error == ENOENT && !existing.empty()) {  // mkdir(2) would fail with EEXIST once the run is over
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(existing, ec).string();
    throw InputError(where, fmt::format("cannot create directory {}: {} is a symbolic link to {}, which does not exist",
                                        directory, existing, target));
  }
  if (error == 0 && ::faccessat(AT_FDCWD, existing.c_str(), W_OK | X_OK, AT_EACCESS) != 0) error = errno;
  if (error == 0) return;
  if (existing == directory && error != ENOTDIR) {
    throw InputError(where, fmt::format("cannot write {}: {}", path, std::strerror(error)));
  }
  throw InputError(where, fmt::format("cannot create directory {}: {}", directory, std::strerror(error)));
}

struct FileIdentity {
  std::string path;  // absolute, normalised
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
};

FileIdentity identity_of(const OutputTarget& t) {
  FileIdentity id;
  id.path = std::filesystem::absolute(t.path).lexically_normal().string();
  struct stat st{};
  if (t.exists && ::stat(t.path.c_str(), &st) == 0) {
    id.exists = true;
    id.device = st.st_dev;
    id.inode = st.st_ino;
  }
  return id;
}

bool same(const FileIdentity& a, const FileIdentity& b) {
  return a.path == b.path || (a.exists && b.exists && a.device == b.device && a.inode == b.inode);
}

}  // namespace

void ensure_writable(const std::string& path, std::string_view where) {
  if (path.empty()) throw InputError(where, "the file name is empty", "a path to write");
  const OutputTarget t = resolve_output(path);
  if (!t.problem.empty()) throw InputError(where, t.problem, kExpected);
  switch (t.kind) {
    case OutputKind::kFile: return check_new_file(t, path, where);
    case OutputKind::kInPlace:
      if (::faccessat(AT_FDCWD, t.path.c_str(), W_OK, AT_EACCESS) != 0) {
        throw InputError(where, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
      }
      return;
    case OutputKind::kStream: return;
  }
}

void check_outputs(const std::vector<NamedOutput>& outputs) {
  std::vector<std::pair<const NamedOutput*, FileIdentity>> files;
  for (const NamedOutput& output : outputs) {
    if (output.path.empty()) continue;
    ensure_writable(output.path, output.flag);
    const OutputTarget t = resolve_output(output.path);
    if (t.kind != OutputKind::kFile) continue;
    const FileIdentity id = identity_of(t);
    for (const auto& [earlier, earlier_id] : files) {
      if (!same(id, earlier_id)) continue;
      throw InputError(output.flag,
                       fmt::format("{} names the same file as {} {}; one result would be lost", output.path,
                                   earlier->flag, earlier->path),
                       "a different file for each output");
    }
    files.emplace_back(&output, id);
  }
}

void check_not_input(const NamedOutput& output, std::string_view input, const std::string& input_path) {
  struct stat in{};
  if (output.path.empty() || ::stat(input_path.c_str(), &in) != 0 || !S_ISREG(in.st_mode)) return;
  const OutputTarget t = resolve_output(output.path);
  struct stat out{};
  if (t.kind != OutputKind::kFile || !t.exists || ::stat(t.path.c_str(), &out) != 0) return;
  if (in.st_dev != out.st_dev || in.st_ino != out.st_ino) return;
  throw InputError(output.flag,
                   fmt::format("{} is the file {} reads{}; the result would replace it", output.path, input,
                               input_path == output.path ? "" : fmt::format(" (as {})", input_path)),
                   "an output that is not one of the command's inputs");
}

}  // namespace commscale

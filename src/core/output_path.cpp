#include "core/output_path.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

namespace commscale {
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's own limit on links followed in one lookup

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// The canonical form of an existing directory; "" and the reason in `error` when it cannot be resolved.
std::string real_directory(const std::string& directory, int* error) {
  const std::unique_ptr<char, decltype(&std::free)> real(::realpath(directory.c_str(), nullptr), &std::free);
  *error = real ? 0 : errno;
  return real ? std::string(real.get()) : std::string();
}

// open(2) refuses a socket (ENXIO): said before the run rather than when its results are written.
std::string socket_problem(const std::string& path) {
  return fmt::format("{} is a socket, which cannot be opened as a file", path);
}

// /proc/self/fd/N and its kin are not links to follow by name: their targets ("pipe:[123]", a deleted
// file) are only reachable through the link itself, so they are written through it, or to the stream.
OutputTarget through_proc_link(const std::string& path, const std::string& directory, const std::string& name) {
  OutputTarget t;
  if (directory == fmt::format("/proc/{}/fd", ::getpid()) && (name == "1" || name == "2")) {
    t.kind = OutputKind::kStream;  // /dev/stdout, /dev/stderr, /dev/fd/1, /proc/self/fd/2, ...
    t.stream_fd = name == "1" ? STDOUT_FILENO : STDERR_FILENO;
    return t;
  }
  struct stat target{};
  if (::stat(path.c_str(), &target) != 0) {
    t.problem = fmt::format("cannot write {}: {}", path, std::strerror(errno));
    return t;
  }
  if (S_ISDIR(target.st_mode)) {
    t.problem = fmt::format("{} is a directory", path);
    return t;
  }
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat stream{};
    if (::fstat(fd, &stream) == 0 && same_file(stream, target)) {
      t.kind = OutputKind::kStream;
      t.stream_fd = fd;
      return t;
    }
  }
  if (S_ISSOCK(target.st_mode)) {
    t.problem = socket_problem(path);
    return t;
  }
  t.kind = OutputKind::kInPlace;
  t.path = path;
  return t;
}

// A link in a sticky directory that others may write (/tmp) is followed only when its owner is this
// user or the directory's owner, as the kernel's fs.protected_symlinks does for open(): replacing the
// target by rename would otherwise let anyone aim our output at another file.
bool may_follow(const std::string& directory, const struct stat& link) {
  struct stat dir{};
  if (::stat(directory.c_str(), &dir) != 0) return false;
  const bool shared = (dir.st_mode & S_ISVTX) != 0 && (dir.st_mode & S_IWOTH) != 0;
  return !shared || link.st_uid == ::geteuid() || link.st_uid == dir.st_uid;
}

std::string read_link(const std::string& path) {
  std::string target(PATH_MAX, '\0');
  const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
  if (n < 0) return {};
  target.resize(static_cast<std::size_t>(n));
  return target;
}

}  // namespace

std::string directory_of(const std::string& file) {
  const std::string parent = std::filesystem::path(file).parent_path().string();
  return parent.empty() ? std::string(".") : parent;
}

OutputTarget resolve_output(const std::string& path) {
  OutputTarget t;
  if (path == "-") {
    t.kind = OutputKind::kStream;
    t.stream_fd = STDOUT_FILENO;
    return t;
  }
  std::string current = path;
  for (int links = 0; links <= kMaxLinks; ++links) {
    const std::string name = std::filesystem::path(current).filename().string();
    if (name.empty() || name == "." || name == "..") {
      t.problem = fmt::format("{} is a directory", path);
      return t;
    }
    int error = 0;
    const std::string directory = real_directory(directory_of(current), &error);
    if (directory.empty()) {
      if (error != ENOENT && error != ENOTDIR) {
        t.problem = fmt::format("cannot write {}: {}", path, std::strerror(error));
        return t;
      }
      t.path = current;  // in a directory still to be made (or that cannot be: the check says which)
      return t;
    }
    if (directory == "/proc" || directory.starts_with("/proc/")) return through_proc_link(current, directory, name);
    const std::string full = directory == "/" ? "/" + name : directory + "/" + name;
    struct stat st{};
    if (::lstat(full.c_str(), &st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR) {
        t.problem = fmt::format("cannot write {}: {}", path, std::strerror(errno));
        return t;
      }
      t.path = full;
      return t;
    }
    if (S_ISLNK(st.st_mode)) {
      if (!may_follow(directory, st)) {
        t.problem = fmt::format("{} is a link owned by another user in the shared directory {}; not followed", full,
                                directory);
        return t;
      }
      const std::string target = read_link(full);
      if (target.empty()) {
        t.problem = fmt::format("cannot read the link {}: {}", full, std::strerror(errno));
        return t;
      }
      current = target.front() == '/' ? target : directory + "/" + target;
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      t.problem = fmt::format("{} is a directory", path);
      return t;
    }
    if (S_ISSOCK(st.st_mode)) {
      t.problem = socket_problem(path);
      return t;
    }
    t.kind = S_ISREG(st.st_mode) ? OutputKind::kFile : OutputKind::kInPlace;
    t.path = full;
    t.exists = true;
    return t;
  }
  t.problem = fmt::format("cannot write {}: {}", path, std::strerror(ELOOP));
  return t;
}

int make_directories(const std::string& directory, std::string* failed) {
  std::filesystem::path made;
  for (const std::filesystem::path& part : std::filesystem::path(directory)) {
    made /= part;
    if (part.empty() || part == "/" || part == "." || part == "..") continue;
    if (::mkdir(made.c_str(), kResultDirectoryMode) == 0) continue;
    int error = errno;
    struct stat st{};
    if (error == EEXIST) error = ::stat(made.c_str(), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    if (error == 0) continue;
    *failed = made.string();
    return error;
  }
  return 0;
}

}  // namespace commscale

#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/written_files.hpp"

namespace commscale {
namespace {

std::string temp_path_for(const std::string& path) { return fmt::format("{}.tmp.{}", path, ::getpid()); }

// Writes all of `content` to a new file at `path`, flushed to disk. Returns 0 or an errno value.
int write_new_file(const std::string& path, std::string_view content) {
  // A new file (never one left behind, nor what a symbolic link points to), with the result-file mode.
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kResultFileMode);
  if (fd < 0) return errno;
  int error = 0;
  for (std::size_t done = 0; done < content.size() && error == 0;) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno != EINTR) error = errno;
    if (n > 0) done += static_cast<std::size_t>(n);
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string temp = temp_path_for(path);
  int error = write_new_file(temp, content);
  if (error == 0 && std::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    throw RuntimeFailure(fmt::format("cannot write {}: {}", path, std::strerror(error)));
  }
  note_file_written(path);
}

void ensure_writable(const std::string& path, std::string_view where) {
  if (path.empty()) throw InputError(where, "the file name is empty", "a path to write");
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw InputError(where, fmt::format("cannot create directory {}: {}", parent.string(), ec.message()));
  if (std::filesystem::is_directory(path, ec)) throw InputError(where, fmt::format("{} is a directory", path), "a file path");
  const std::string probe = temp_path_for(path);
  const int error = write_new_file(probe, {});
  ::unlink(probe.c_str());
  if (error != 0) throw InputError(where, fmt::format("cannot write {}: {}", path, std::strerror(error)));
}

}  // namespace commscale

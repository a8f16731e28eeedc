#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/output_path.hpp"
#include "core/written_files.hpp"

namespace commscale {
namespace {

[[noreturn]] void fail(const std::string& path, int error) {
  throw RuntimeFailure(fmt::format("cannot write {}: {}", path, std::strerror(error)));
}

// Returns 0 or an errno value.
int write_all(int fd, std::string_view content) {
  for (std::size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// A new file in `directory` under a short name (a 255-byte target name leaves no room for a suffix).
int create_temp(const std::string& directory, std::string* temp) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    *temp = fmt::format("{}/.commscale-{}-{}.tmp", directory, ::getpid(), counter++);
    const int fd = ::open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, kResultFileMode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

void replace_file(const OutputTarget& target, const std::string& given, std::string_view content, Flush flush) {
  const std::string directory = directory_of(target.path);
  std::string failed;
  if (const int error = make_directories(directory, &failed); error != 0) {
    throw RuntimeFailure(fmt::format("cannot create directory {}: {}", failed, std::strerror(error)));
  }
  std::string temp;
  const int fd = create_temp(directory, &temp);
  if (fd < 0) fail(given, errno);
  int error = write_all(fd, content);
  if (error == 0 && flush == Flush::kToDisk && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && std::rename(temp.c_str(), target.path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    fail(given, error);
  }
}

void write_in_place(const std::string& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fail(path, errno);
  int error = write_all(fd, content);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) fail(path, error);
}

void write_stream(int fd, const std::string& given, std::string_view content) {
  std::cout.flush();  // what was printed comes first
  std::cerr.flush();
  std::fflush(nullptr);
  if (const int error = write_all(fd, content); error != 0) fail(given, error);
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view content, Flush flush) {
  const OutputTarget target = resolve_output(path);
  if (!target.problem.empty()) throw RuntimeFailure(target.problem);
  switch (target.kind) {
    case OutputKind::kFile:
      replace_file(target, path, content, flush);
      note_file_written(path);  // what an interrupted run says it kept (a device or stream keeps nothing)
      return;
    case OutputKind::kInPlace: return write_in_place(target.path, content);
    case OutputKind::kStream: return write_stream(target.stream_fd, path, content);
  }
}

bool replaced_atomically(const std::string& path) { return resolve_output(path).kind == OutputKind::kFile; }

}  // namespace commscale

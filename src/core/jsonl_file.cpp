#include "core/jsonl_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/output_path.hpp"
#include "core/written_files.hpp"

namespace commscale {
namespace {

// A fresh regular file, not an old one truncated: it gets this run's mode whatever the old one had.
int create_fresh(const std::string& path) {
  std::string failed;
  if (const int error = make_directories(directory_of(path), &failed); error != 0) {
    throw RuntimeFailure(fmt::format("cannot create directory {}: {}", failed, std::strerror(error)));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw RuntimeFailure(fmt::format("cannot replace {}: {}", path, std::strerror(errno)));
  }
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, kResultFileMode);
}

}  // namespace

JsonLinesFile::JsonLinesFile(std::string path) : path_(std::move(path)) {
  const OutputTarget target = resolve_output(path_);
  if (!target.problem.empty()) throw RuntimeFailure(target.problem);
  switch (target.kind) {
    case OutputKind::kFile:
      fd_ = create_fresh(target.path);
      regular_ = true;
      break;
    case OutputKind::kInPlace:  // a device or FIFO: never unlinked, written as it is
      fd_ = ::open(target.path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
      break;
    case OutputKind::kStream:
      fd_ = target.stream_fd;
      stream_ = true;
      return;
  }
  if (fd_ < 0) throw RuntimeFailure(fmt::format("cannot create {}: {}", path_, std::strerror(errno)));
}

JsonLinesFile::~JsonLinesFile() {
  if (fd_ >= 0 && !stream_) ::close(fd_);
}

void JsonLinesFile::append(const nlohmann::json& record) {
  // dump() escapes newlines inside strings; bytes that are not UTF-8 become U+FFFD rather than a throw
  // after the work is done.
  const std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (stream_) {
    std::cout.flush();
    std::fflush(nullptr);
  }
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RuntimeFailure(fmt::format("cannot append to {}: {}", path_, std::strerror(n < 0 ? errno : EIO)));
    done += static_cast<std::size_t>(n);
  }
  note_line_appended(path_);
}

void JsonLinesFile::flush_to_disk() {
  if (regular_ && ::fdatasync(fd_) != 0) {
    throw RuntimeFailure(fmt::format("cannot flush {}: {}", path_, std::strerror(errno)));
  }
}

std::string jsonl_path_beside(std::string_view json_path) {
  constexpr std::string_view kJson = ".json";
  if (json_path.size() > kJson.size() && json_path.substr(json_path.size() - kJson.size()) == kJson) {
    return fmt::format("{}l", json_path);
  }
  return fmt::format("{}.jsonl", json_path);
}

}  // namespace commscale

#include "core/jsonl_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/written_files.hpp"

namespace commscale {

JsonLinesFile::JsonLinesFile(std::string path) : path_(std::move(path)) {
  // A fresh file, not an old one truncated: it gets this run's mode whatever the old one had.
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
    throw RuntimeFailure(fmt::format("cannot replace {}: {}", path_, std::strerror(errno)));
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, kResultFileMode);
  if (fd_ < 0) throw RuntimeFailure(fmt::format("cannot create {}: {}", path_, std::strerror(errno)));
}

JsonLinesFile::~JsonLinesFile() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonLinesFile::append(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";  // dump() escapes newlines inside strings
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RuntimeFailure(fmt::format("cannot append to {}: {}", path_, std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd_) != 0) throw RuntimeFailure(fmt::format("cannot flush {}: {}", path_, std::strerror(errno)));
  note_line_appended(path_);
}

std::string jsonl_path_beside(std::string_view json_path) {
  constexpr std::string_view kJson = ".json";
  if (json_path.size() > kJson.size() && json_path.substr(json_path.size() - kJson.size()) == kJson) {
    return fmt::format("{}l", json_path);
  }
  return fmt::format("{}.jsonl", json_path);
}

}  // namespace commscale

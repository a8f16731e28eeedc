#include "core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

constexpr std::string_view kExpected = "a regular file or a pipe";

// What a file that cannot be read is, in words; empty for the kinds that can be read.
std::string_view refused_kind(mode_t mode) {
  if (S_ISREG(mode) || S_ISFIFO(mode)) return {};
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string size_text(std::size_t bytes) {
  return bytes % (std::size_t{1} << 20) == 0 ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} bytes", bytes);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_;
};

// Whether `st` is the pipe this process writes its output to (`hw show /dev/stdout` under a pipe):
// reading it would wait for ourselves.
bool is_own_output(const struct stat& st) {
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat out {};
    if (::fstat(fd, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino) return true;
  }
  return false;
}

void check_kind(const std::string& where, const struct stat& st, std::size_t max_bytes) {
  if (const std::string_view kind = refused_kind(st.st_mode); !kind.empty()) {
    throw InputError(where, fmt::format("is {}", kind), kExpected);
  }
  if (S_ISFIFO(st.st_mode) && is_own_output(st)) {
    throw InputError(where, "is the pipe commscale writes its own output to", kExpected);
  }
  if (S_ISREG(st.st_mode) && static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    throw InputError(where, fmt::format("is larger than {} ({} bytes)", size_text(max_bytes), st.st_size),
                     fmt::format("an input file of at most {}", size_text(max_bytes)));
  }
}

}  // namespace

std::string read_input_file(const std::filesystem::path& file, std::size_t max_bytes) {
  const std::string where = file.string();
  // The kind is checked before opening (opening a device can do things) and again on what was opened.
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    throw InputError(where, fmt::format("cannot be read ({})", std::strerror(errno)), kExpected);
  }
  check_kind(where, st, max_bytes);
  const Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) throw InputError(where, fmt::format("cannot be read ({})", std::strerror(errno)), kExpected);
  if (::fstat(fd.get(), &st) != 0) {
    throw InputError(where, fmt::format("cannot be read ({})", std::strerror(errno)), kExpected);
  }
  check_kind(where, st, max_bytes);
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(where, fmt::format("cannot be read ({})", std::strerror(errno)), kExpected);
    if (n == 0) return text;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
      throw InputError(where, fmt::format("holds more than {}", size_text(max_bytes)),
                       fmt::format("an input file of at most {}", size_text(max_bytes)));
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

bool input_exists(const std::filesystem::path& path) {
  std::error_code ec;
  const bool found = std::filesystem::exists(path, ec);  // not found clears ec; other failures set it
  if (ec) throw InputError(path.string(), fmt::format("cannot be looked at ({})", ec.message()), "a path that can be read");
  return found;
}

namespace {

std::string_view kind_of(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::character: return "a character device";
    case std::filesystem::file_type::block: return "a block device";
    case std::filesystem::file_type::fifo: return "a FIFO";
    case std::filesystem::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

// Whether `entry` is a regular file once links are followed; a link to nowhere or a folder is not. A
// link loop, and a device, FIFO or socket (a link to /dev/zero among the files), throw: refused as the
// same file given alone is, not skipped (a FIFO in a folder could also keep the reader waiting).
bool is_input_file(const std::filesystem::directory_entry& entry) {
  std::error_code ec;
  const std::filesystem::file_status status = entry.status(ec);
  if (status.type() == std::filesystem::file_type::not_found) return false;
  if (ec) {
    throw InputError(entry.path().string(), fmt::format("cannot be looked at ({})", ec.message()),
                     "a readable file or a symbolic link to one");
  }
  if (std::filesystem::is_regular_file(status)) return true;
  if (std::filesystem::is_directory(status)) return false;
  throw InputError(entry.path().string(), fmt::format("is {}", kind_of(status.type())),
                   "a regular file in a folder of input files");
}

template <class Iterator>
std::vector<std::filesystem::path> list_with(const std::filesystem::path& folder, std::string_view extension) {
  const auto fail = [&](const std::error_code& ec) {
    throw InputError(folder.string(), fmt::format("cannot be listed ({})", ec.message()), "a readable folder");
  };
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  Iterator it(folder, ec);
  if (ec) fail(ec);
  for (; it != Iterator(); it.increment(ec)) {
    if (it->path().extension() == extension && is_input_file(*it)) out.push_back(it->path());
  }
  if (ec) fail(ec);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::filesystem::path> list_input_folder(const std::filesystem::path& folder, std::string_view extension,
                                                     bool recursive) {
  if (recursive) return list_with<std::filesystem::recursive_directory_iterator>(folder, extension);
  return list_with<std::filesystem::directory_iterator>(folder, extension);
}

}  // namespace commscale

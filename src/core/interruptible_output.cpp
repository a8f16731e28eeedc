#include "core/interruptible_output.hpp"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <string_view>
#include <utility>

namespace commscale {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{16} * 1024;  // drained when this full, or at a flush
constexpr int kPollMs = 50;                                   // how often a write waiting for its reader asks `stop`
constexpr std::size_t kPieceBytes = PIPE_BUF;                 // a pipe with room takes this much without sleeping

}  // namespace

InterruptibleOutput::InterruptibleOutput(int fd, std::function<bool()> stop) : fd_(fd), stop_(std::move(stop)) {
  struct stat status {};
  regular_file_ = ::fstat(fd_, &status) == 0 && S_ISREG(status.st_mode);
  line_buffered_ = ::isatty(fd_) == 1;
  pending_.reserve(kBufferBytes);
}

InterruptibleOutput::~InterruptibleOutput() { drain(); }

InterruptibleOutput::int_type InterruptibleOutput::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return sync() == 0 ? traits_type::not_eof(c) : c;
  const char character = traits_type::to_char_type(c);
  pending_.push_back(character);
  const bool full = pending_.size() >= kBufferBytes || (line_buffered_ && character == '\n');
  if (full && !drain()) return traits_type::eof();
  return c;
}

std::streamsize InterruptibleOutput::xsputn(const char* text, std::streamsize count) {
  const std::string_view added(text, static_cast<std::size_t>(count));
  pending_.append(added);
  const bool full = pending_.size() >= kBufferBytes || (line_buffered_ && added.find('\n') != std::string_view::npos);
  if (full && !drain()) return 0;
  return count;
}

int InterruptibleOutput::sync() { return drain() ? 0 : -1; }

bool InterruptibleOutput::wait_writable() {
  for (;;) {
    const bool stopping = stop_ && stop_();
    pollfd descriptor{fd_, POLLOUT, 0};
    const int ready = ::poll(&descriptor, 1, stopping ? 0 : kPollMs);
    if (ready > 0) return true;                    // room, or an error that the write reports
    if (ready < 0 && errno != EINTR) return true;  // likewise
    if (ready == 0 && stopping) return false;
  }
}

bool InterruptibleOutput::drain() {
  std::size_t done = 0;
  bool whole = true;
  while (done < pending_.size()) {
    if (!regular_file_ && !wait_writable()) {
      whole = false;
      break;
    }
    const std::size_t left = pending_.size() - done;
    const ssize_t written = ::write(fd_, pending_.data() + done, regular_file_ ? left : std::min(left, kPieceBytes));
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) {
      whole = false;
      break;
    }
    done += static_cast<std::size_t>(written);
  }
  pending_.clear();
  return whole;
}

InterruptibleStream::InterruptibleStream(std::ostream& stream, int fd, std::function<bool()> stop)
    : stream_(stream), output_(fd, std::move(stop)) {
  stream_.flush();
  previous_ = stream_.rdbuf(&output_);
}

InterruptibleStream::~InterruptibleStream() {
  stream_.flush();
  stream_.rdbuf(previous_);  // also clears a bad state that a dropped write left
}

}  // namespace commscale

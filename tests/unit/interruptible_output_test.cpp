// Standard output that a signal can get a rank out of (core/interruptible_output): a slow reader gets
// everything, and a reader that stopped reading cannot hold the writer once `stop` is true.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include "core/interruptible_output.hpp"

namespace commscale {
namespace {

using namespace std::chrono_literals;

class Pipe {
 public:
  Pipe() { EXPECT_EQ(::pipe(ends_.data()), 0); }
  ~Pipe() {
    close_write();
    ::close(ends_[0]);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  [[nodiscard]] int read_end() const { return ends_[0]; }
  [[nodiscard]] int write_end() const { return ends_[1]; }
  void close_write() {
    if (ends_[1] >= 0) ::close(ends_[1]);
    ends_[1] = -1;
  }
  // Everything until the write end is closed, `pause` between reads.
  [[nodiscard]] std::string read_all(std::chrono::microseconds pause) const {
    std::string text;
    std::array<char, 4096> piece{};
    for (;;) {
      const ssize_t n = ::read(ends_[0], piece.data(), piece.size());
      if (n <= 0) return text;
      text.append(piece.data(), static_cast<std::size_t>(n));
      std::this_thread::sleep_for(pause);
    }
  }
  // What is in the pipe now, without waiting for more.
  [[nodiscard]] std::size_t read_available() const {
    const int flags = ::fcntl(ends_[0], F_GETFL);
    ::fcntl(ends_[0], F_SETFL, flags | O_NONBLOCK);
    std::size_t bytes = 0;
    std::array<char, 4096> piece{};
    for (ssize_t n; (n = ::read(ends_[0], piece.data(), piece.size())) > 0;) bytes += static_cast<std::size_t>(n);
    ::fcntl(ends_[0], F_SETFL, flags);
    return bytes;
  }

 private:
  std::array<int, 2> ends_{-1, -1};
};

std::string numbered_lines(int count) {
  std::ostringstream text;
  for (int i = 0; i < count; ++i) text << "row " << i << ": the quick brown fox jumps over the lazy dog\n";
  return text.str();
}

// A reader slower than the writer (a pager) gets every byte, in order: the writer waits for it.
TEST(InterruptibleOutput, ASlowReaderGetsEverything) {
  Pipe pipe;
  const std::string text = numbered_lines(20000);  // ~1 MB: many times a pipe's 64 KiB
  auto reader = std::async(std::launch::async, [&] { return pipe.read_all(200us); });
  {
    InterruptibleOutput output(pipe.write_end(), [] { return false; });
    std::ostream out(&output);
    for (std::size_t at = 0; at < text.size(); at += 1000) out << text.substr(at, 1000);
    out.flush();
    EXPECT_TRUE(out.good());
  }
  pipe.close_write();
  EXPECT_EQ(reader.get(), text);
}

// Nobody reads the pipe (a launcher busy ending the job): the writer fills it and waits, and once
// `stop` is true it gives up within a poll, drops the rest and leaves the stream bad.
TEST(InterruptibleOutput, StopGetsTheWriterOutOfAPipeNobodyReads) {
  Pipe pipe;
  std::atomic<bool> stop{false};
  const std::string text = numbered_lines(20000);
  auto writer = std::async(std::launch::async, [&] {
    InterruptibleOutput output(pipe.write_end(), [&] { return stop.load(); });
    std::ostream out(&output);
    out << text << std::flush;
    return out.bad();
  });
  EXPECT_EQ(writer.wait_for(300ms), std::future_status::timeout) << "the pipe did not fill";
  const auto stopped = std::chrono::steady_clock::now();
  stop = true;
  if (writer.wait_for(2s) != std::future_status::ready) {
    ADD_FAILURE() << "the writer still waits for the pipe 2 s after stop";
    while (writer.wait_for(10ms) != std::future_status::ready) (void)pipe.read_available();  // free it
  }
  EXPECT_LT(std::chrono::steady_clock::now() - stopped, 1s);
  EXPECT_TRUE(writer.get()) << "the stream should be bad: its output was dropped";
  const std::size_t in_pipe = pipe.read_available();
  EXPECT_GT(in_pipe, 0u);
  EXPECT_LT(in_pipe, text.size());
}

// After `stop`, what the descriptor takes at once still goes out (the last lines before a report).
TEST(InterruptibleOutput, AfterStopWhatFitsIsStillWritten) {
  Pipe pipe;
  {
    InterruptibleOutput output(pipe.write_end(), [] { return true; });
    std::ostream out(&output);
    out << "last row\n" << std::flush;
    EXPECT_TRUE(out.good());
  }
  pipe.close_write();
  EXPECT_EQ(pipe.read_all(0us), "last row\n");
}

// A regular file (Slurm's --output) is written whole; it never waits for a reader.
TEST(InterruptibleOutput, ARegularFileGetsEverything) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("commscale-interruptible-" + std::to_string(::getpid()));
  const std::string text = numbered_lines(5000);
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    {
      InterruptibleOutput output(fd, [] { return true; });
      std::ostream out(&output);
      out << text;
    }
    ::close(fd);
  }
  std::ifstream in(path);
  const std::string read((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  EXPECT_EQ(read, text);
}

// The stream gets its own buffer back, good again, once the guard ends.
TEST(InterruptibleOutput, TheStreamGetsItsBufferBack) {
  Pipe pipe;
  std::ostringstream text;
  std::ostream& stream = text;  // its rdbuf(), not the string stream's own
  std::streambuf* own = stream.rdbuf();
  {
    const InterruptibleStream guard(stream, pipe.write_end(), [] { return false; });
    EXPECT_NE(stream.rdbuf(), own);
    stream << "through the pipe\n";
  }
  EXPECT_EQ(stream.rdbuf(), own);
  stream << "into the string";
  EXPECT_EQ(text.str(), "into the string");
  pipe.close_write();
  EXPECT_EQ(pipe.read_all(0us), "through the pipe\n");
}

}  // namespace
}  // namespace commscale

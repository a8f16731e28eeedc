#pragma once

// Standard output that a signal can get a rank out of.
//
// A rank prints table rows as it goes. When nobody reads them, the pipe to the launcher fills and a
// plain write() sleeps in the kernel until somebody does. Open MPI's mpirun stops reading its ranks'
// output while it handles a SIGTERM or SIGINT: it sends SIGCONT, sleeps odls_base_sigkill_timeout,
// and only then passes the SIGTERM on. A rank that filled the pipe meanwhile is still inside write()
// when the signal comes (SA_RESTART restarts it), and the grace alarm (runtime/interrupt.hpp) ends it
// before it can say what it kept.
//
// This buffer writes its file descriptor in pieces of at most PIPE_BUF bytes, each only once poll()
// says the descriptor takes it. Linux says so of a pipe with a free page, which takes such a piece
// without sleeping; a terminal or socket says so with some room, and a piece rarely outgrows it (the
// grace alarm stays the backstop there).
// Between polls it asks `stop`. Once `stop` is true, it writes only what the descriptor takes at once
// and drops the rest. The stream then goes bad, so later output is dropped too, and the run's thread is
// back in its own code, where the next wait sees the signal. A slow reader (`| less`) loses nothing
// until then.
//
// A regular file is written as it comes, in one call per buffer: it never waits for a reader.

#include <functional>
#include <ostream>
#include <streambuf>
#include <string>

namespace commscale {

class InterruptibleOutput final : public std::streambuf {
 public:
  // Writes to `fd`, which stays open and blocking. A terminal is written line by line, as stdio does.
  InterruptibleOutput(int fd, std::function<bool()> stop);
  ~InterruptibleOutput() override;
  InterruptibleOutput(const InterruptibleOutput&) = delete;
  InterruptibleOutput& operator=(const InterruptibleOutput&) = delete;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* text, std::streamsize count) override;
  int sync() override;

 private:
  // Writes out what is buffered. False where a write failed or `stop` dropped some of it.
  bool drain();
  // Waits until the descriptor takes a piece: false once `stop` is true and it does not at once.
  bool wait_writable();

  int fd_;
  std::function<bool()> stop_;
  std::string pending_;  // written, not yet drained
  bool regular_file_ = false;
  bool line_buffered_ = false;
};

// For its lifetime, `stream` (std::cout) writes through an InterruptibleOutput on `fd`. Then it is
// flushed and its own buffer is put back.
class InterruptibleStream {
 public:
  InterruptibleStream(std::ostream& stream, int fd, std::function<bool()> stop);
  ~InterruptibleStream();
  InterruptibleStream(const InterruptibleStream&) = delete;
  InterruptibleStream& operator=(const InterruptibleStream&) = delete;

 private:
  std::ostream& stream_;
  InterruptibleOutput output_;
  std::streambuf* previous_ = nullptr;
};

}  // namespace commscale

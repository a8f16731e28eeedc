#pragma once

// A result file rewritten as a run goes (bench's -J and --csv after every row), written by a thread of
// its own. The run's thread hands over the new content and goes on at once: replacing a file can hold
// a thread in the kernel for seconds on a slow disk (the rename frees the old file's blocks, which a
// filesystem mounted with `discard` trims there and then), and a rank must get back to a wait within
// 3 s of a signal (runtime/interrupt.hpp). Content handed over while a write is in progress replaces
// the content still waiting: only the newest is written. Each write replaces the file atomically
// (core/atomic_file.hpp, Flush::kToKernel); the last one, from finish(), is flushed to disk.
//
// A device, FIFO or stream (core/output_path.hpp) is not rewritten: it gets its content once, from
// finish() (a reader of a FIFO would otherwise see one document per row).

#include <memory>
#include <string>
#include <string_view>

namespace commscale {

class FileRewriter {
 public:
  // Starts the writer thread where `path` is (or will be) a regular file.
  explicit FileRewriter(std::string path);
  // A write in progress is waited for 1 s at most, then left to finish on its own (the run may be
  // ending on a signal and must not wait for a slow disk); content still waiting is dropped: the file
  // keeps its last complete content.
  ~FileRewriter();
  FileRewriter(const FileRewriter&) = delete;
  FileRewriter& operator=(const FileRewriter&) = delete;

  // Hands `content` to the writer and returns (nothing to do for a device, FIFO or stream). Throws the
  // RuntimeFailure of an earlier write that failed (a full disk: exit 3, the file as it was before).
  void rewrite(std::string content);
  // Waits for the write in progress, then writes `content` from this thread: a regular file replaced
  // and flushed to disk, anything else written once. Throws RuntimeFailure (an earlier write's, or
  // this one's).
  void finish(std::string_view content);

  struct State;  // shared with the writer thread (defined in the .cpp)

 private:
  std::string path_;
  std::shared_ptr<State> state_;  // null for a device, FIFO or stream
};

}  // namespace commscale

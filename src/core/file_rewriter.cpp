#include "core/file_rewriter.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "core/atomic_file.hpp"

namespace commscale {

struct FileRewriter::State {
  std::string path;
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<std::string> waiting;  // the newest content, not yet taken by the writer
  bool writing = false;
  bool stop = false;
  std::exception_ptr error;  // the first write that failed
  std::thread thread;
};

namespace {

// The writer thread: takes the newest content and writes it, until told to stop.
void write_loop(const std::shared_ptr<FileRewriter::State>& s) {
  std::unique_lock<std::mutex> lock(s->mutex);
  for (;;) {
    s->changed.wait(lock, [&] { return s->stop || s->waiting.has_value(); });
    if (s->stop) return;
    const std::string content = std::move(*s->waiting);
    s->waiting.reset();
    s->writing = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      write_file_atomically(s->path, content, Flush::kToKernel);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    s->writing = false;
    if (error && !s->error) s->error = error;
    s->changed.notify_all();
  }
}

}  // namespace

FileRewriter::FileRewriter(std::string path) : path_(std::move(path)) {
  if (!replaced_atomically(path_)) return;
  state_ = std::make_shared<State>();
  state_->path = path_;
  state_->thread = std::thread(write_loop, state_);
}

FileRewriter::~FileRewriter() {
  if (!state_) return;
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->stop = true;
  state_->waiting.reset();
  state_->changed.notify_all();
  // A write in progress gets a moment to end (a temporary file left behind otherwise, should the
  // process exit during it), never more than a third of a signal's grace.
  const bool busy = !state_->changed.wait_for(lock, std::chrono::seconds(1), [&] { return !state_->writing; });
  lock.unlock();
  // The thread holds its own reference to the state: detached, it ends once its write returns.
  if (busy) {
    state_->thread.detach();
  } else {
    state_->thread.join();
  }
}

void FileRewriter::rewrite(std::string content) {
  if (!state_) return;
  const std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->error) std::rethrow_exception(state_->error);
  state_->waiting = std::move(content);
  state_->changed.notify_all();
}

void FileRewriter::finish(std::string_view content) {
  if (state_) {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->waiting.reset();  // superseded by `content`
    state_->changed.wait(lock, [&] { return !state_->writing; });
    if (state_->error) std::rethrow_exception(state_->error);
  }
  write_file_atomically(path_, content, Flush::kToDisk);
}

}  // namespace commscale

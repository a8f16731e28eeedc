#pragma once

// JSON Lines written as a run goes: one JSON document per line, each line handed to the kernel whole
// (write(2)) before the run goes on, so a run killed or stopped by a signal half way leaves every line
// it completed readable. The file is flushed to disk once, at the end of the run (flush_to_disk): a
// flush per line would perturb the measurement and, on a slow disk, hold the rank for seconds, past
// the grace a signal gives it (runtime/interrupt.hpp). A crash of the machine itself may lose the
// lines of a run that had not ended.
//
// A run starts its file afresh: a regular file is replaced by a new one when it is opened (so open it
// only once the run's input has been checked), and a new run never appends to an old one's lines. A
// device, FIFO or standard output (core/output_path.hpp) is written as it is, never unlinked.

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace commscale {

class JsonLinesFile {
 public:
  // Creates `path` anew (mode 0664 less the umask, as result files; a link's target is replaced, the
  // link kept), or opens a device, FIFO or stream in place. Throws RuntimeFailure.
  explicit JsonLinesFile(std::string path);
  ~JsonLinesFile();
  JsonLinesFile(const JsonLinesFile&) = delete;
  JsonLinesFile& operator=(const JsonLinesFile&) = delete;

  // Appends `record` as one line (one write, no flush to disk). Throws RuntimeFailure.
  void append(const nlohmann::json& record);
  // Flushes what was appended to disk (fdatasync; nothing to do for a device, FIFO or stream): at the
  // end of a run. Throws RuntimeFailure.
  void flush_to_disk();
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool regular_ = false;  // a regular file: flush_to_disk() has something to flush
  bool stream_ = false;   // standard output or error: not ours to close
};

// Where the JSON Lines of a run go when only -J was given: "out.json" -> "out.jsonl", else "<path>.jsonl".
[[nodiscard]] std::string jsonl_path_beside(std::string_view json_path);

}  // namespace commscale

#pragma once

// JSON Lines written as a run goes: one JSON document per line, each line written whole and flushed to
// disk before the run goes on, so a run killed half way leaves every line it completed readable (a
// reader may find the last line cut short only if the machine itself went down mid-write).
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

  // Appends `record` as one line and flushes it to disk. Throws RuntimeFailure.
  void append(const nlohmann::json& record);
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool durable_ = false;  // a regular file: each line is flushed to disk
  bool stream_ = false;   // standard output or error: not ours to close
};

// Where the JSON Lines of a run go when only -J was given: "out.json" -> "out.jsonl", else "<path>.jsonl".
[[nodiscard]] std::string jsonl_path_beside(std::string_view json_path);

}  // namespace commscale

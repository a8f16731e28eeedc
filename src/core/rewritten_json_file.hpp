#pragma once

// A JSON result document that a long run rewrites after each step (bench's rows, doctor's phases), so
// that an interrupted run leaves a valid file with "complete": false and everything measured so far.
// The writes go through core/file_rewriter.hpp: atomically, on a thread of their own (a slow disk never
// holds the run), and a device, FIFO or stream gets the document once, at the end.

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/file_rewriter.hpp"
#include "core/json_text.hpp"

namespace commscale {

class RewrittenJsonFile {
 public:
  explicit RewrittenJsonFile(std::string path) : file_(std::move(path)) {}

  [[nodiscard]] nlohmann::json& doc() noexcept { return doc_; }
  // After a step: hands the document to the writer (nothing for a device, FIFO or stream).
  void step() { file_.rewrite(json_text(doc_, 1)); }
  // At the end: writes the document, whatever the path is, and flushes a regular file to disk.
  void finish() { file_.finish(json_text(doc_, 1)); }

 private:
  FileRewriter file_;
  nlohmann::json doc_;
};

}  // namespace commscale

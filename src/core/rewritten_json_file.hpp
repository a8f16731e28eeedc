#pragma once

// A JSON result document that a long run rewrites after each step (bench's rows, doctor's phases),
// atomically, so that an interrupted run leaves a valid file with "complete": false and everything
// measured so far. A device, FIFO or stream gets the document once, at the end (a reader of a FIFO
// would otherwise see one document per step).

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/json_text.hpp"

namespace commscale {

class RewrittenJsonFile {
 public:
  explicit RewrittenJsonFile(std::string path) : path_(std::move(path)), as_it_goes_(replaced_atomically(path_)) {}

  [[nodiscard]] nlohmann::json& doc() noexcept { return doc_; }
  // After a step: rewrites the file, when it is one that can be replaced.
  void step() const {
    if (as_it_goes_) write();
  }
  // At the end: writes the document, whatever the path is.
  void finish() const { write(); }

 private:
  void write() const { write_file_atomically(path_, json_text(doc_, 1)); }

  std::string path_;
  bool as_it_goes_;
  nlohmann::json doc_;
};

}  // namespace commscale

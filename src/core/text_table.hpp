#pragma once

// A plain text table: a header row, rows of cells, columns as wide as their widest cell.

#include <string>
#include <vector>

namespace commscale {

class TextTable {
 public:
  // Columns whose header ends in '>' are right-aligned (the '>' is not printed).
  explicit TextTable(std::vector<std::string> headers);
  void add(std::vector<std::string> row);
  [[nodiscard]] std::string render(const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace commscale

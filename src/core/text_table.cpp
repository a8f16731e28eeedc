#include "core/text_table.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/printable.hpp"

namespace commscale {

TextTable::TextTable(std::vector<std::string> headers) {
  for (std::string& h : headers) {
    const bool right = !h.empty() && h.back() == '>';
    if (right) h.pop_back();
    right_.push_back(right);
    headers_.push_back(std::move(h));
  }
}

void TextTable::add(std::vector<std::string> row) {
  row.resize(headers_.size());
  for (std::string& cell : row) cell = printable(cell);  // names of devices, GPUs and links reach the terminal
  rows_.push_back(std::move(row));
}

std::string TextTable::render(const std::string& indent) const {
  std::vector<std::size_t> width(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    width[c] = headers_[c].size();
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      if (right_[c]) {
        out += fmt::format("{:>{}}", cells[c], width[c]);
      } else {
        out += last ? cells[c] : fmt::format("{:<{}}", cells[c], width[c]);
      }
      if (!last) out += "  ";
    }
    return out + "\n";
  };
  std::string out = line(headers_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace commscale

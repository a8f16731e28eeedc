#pragma once

// The page `commscale report` writes: one self-contained HTML file (inline CSS, inline SVG, one small
// inline script, nothing fetched from anywhere) made of sections, each a chart and the tables
// behind it. The script checks, once the page has loaded, that every chart has a nonzero size and
// records the result in <body data-charts-rendered="N" data-charts-failed="M">, so that a headless
// browser can tell that the page drew.

#include <string>
#include <vector>

namespace commscale {

struct HtmlTable {
  std::string caption;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // plain text: escaped when written
};

struct HtmlSection {
  std::string id;  // anchor, [a-z0-9-]
  std::string title;
  std::vector<std::string> paragraphs;  // plain text
  std::vector<std::string> charts;      // <svg> elements (trusted markup from charts.hpp)
  std::vector<HtmlTable> tables;
  std::vector<std::pair<std::string, std::string>> links;  // (text, href): href escaped
};

struct HtmlPage {
  std::string title;
  std::vector<std::string> inputs;  // the files the page was made from
  std::vector<std::string> notes;   // what was skipped and why
  std::vector<HtmlSection> sections;
};

[[nodiscard]] std::string render_html(const HtmlPage& page);
[[nodiscard]] std::string html_table(const HtmlTable& table);

}  // namespace commscale

#include "report/html_page.hpp"

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "report/svg.hpp"

namespace commscale {
namespace {

constexpr std::string_view kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1100px;
       color: #222; padding: 0 16px; }
h1 { font-size: 22px; } h2 { font-size: 18px; border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 32px; }
nav a { margin-right: 12px; }
svg.chart { display: block; margin: 12px 0; background: #fff; border: 1px solid #eee; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
details { margin: 6px 0 12px; } summary { cursor: pointer; color: #0072B2; }
.inputs { font-size: 12px; color: #555; } .note { color: #8a4b00; }
)";

// Runs after load: every chart must have a nonzero box and drawn content. Errors anywhere on the
// page are counted too.
constexpr std::string_view kCheckScript = R"(
(function () {
  var errors = 0;
  window.addEventListener('error', function () { errors += 1; document.body.dataset.pageErrors = String(errors); });
  window.addEventListener('load', function () {
    var charts = document.querySelectorAll('svg.chart');
    var drawn = 0, failed = 0, clipped = 0;
    charts.forEach(function (svg) {
      var box = svg.getBoundingClientRect();
      if (box.width > 0 && box.height > 0 && svg.querySelectorAll('rect,line,polyline,circle,text').length > 0) {
        drawn += 1;
      } else {
        failed += 1;
        console.error('chart not drawn: ' + svg.getAttribute('aria-label'));
      }
      // Every label inside its chart (transforms included): a label the chart cuts is a lost label.
      svg.querySelectorAll('text').forEach(function (text) {
        var t = text.getBoundingClientRect();
        if (t.left < box.left - 1 || t.right > box.right + 1 || t.top < box.top - 1 || t.bottom > box.bottom + 1) {
          clipped += 1;
          console.error('label cut by its chart: "' + text.textContent + '" in ' + svg.getAttribute('aria-label'));
        }
      });
    });
    document.body.dataset.chartsRendered = String(drawn);
    document.body.dataset.chartsFailed = String(failed);
    document.body.dataset.labelsClipped = String(clipped);
    document.body.dataset.pageErrors = String(errors);
    document.title = document.title + ' [charts ' + drawn + '/' + charts.length + ']';
  });
})();
)";

// A link as the page may carry it: the Perfetto UI's https address, or a file beside the page. A file
// name is percent-encoded but for letters, digits, "-._~/", so no name ("javascript:alert(1)", "a#b")
// can become a scheme, a fragment or a query: every file link stays relative (or rooted at "/").
std::string safe_href(std::string_view href) {
  if (href.starts_with("https://")) return std::string(href);
  std::string out;
  for (const char c : href) {
    const auto u = static_cast<unsigned char>(c);
    const bool plain = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
                       c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    out += plain ? std::string(1, c) : fmt::format("%{:02X}", u);
  }
  return out;
}

}  // namespace

std::string html_table(const HtmlTable& table) {
  std::string out = "<table>\n";
  if (!table.caption.empty()) out += fmt::format("<caption>{}</caption>\n", xml_escape(table.caption));
  out += "<thead><tr>";
  for (const std::string& h : table.header) out += fmt::format("<th>{}</th>", xml_escape(h));
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (const std::string& cell : row) out += fmt::format("<td>{}</td>", xml_escape(cell));
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
  return out;
}

std::string render_html(const HtmlPage& page) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body data-charts-rendered=\"0\" data-charts-failed=\"0\" "
      "data-labels-clipped=\"-1\">\n<h1>{}</h1>\n",
      xml_escape(page.title), kStyle, xml_escape(page.title));
  out += "<nav>";
  for (const HtmlSection& s : page.sections)
    out += fmt::format("<a href=\"#{}\">{}</a>", xml_escape(s.id), xml_escape(s.title));
  out += "</nav>\n<div class=\"inputs\"><details><summary>";
  out += fmt::format("made by commscale report from {} file{}</summary><ul>\n", page.inputs.size(),
                     page.inputs.size() == 1 ? "" : "s");
  for (const std::string& f : page.inputs) out += fmt::format("<li>{}</li>\n", xml_escape(f));
  out += "</ul></details></div>\n";
  for (const std::string& n : page.notes) out += fmt::format("<p class=\"note\">{}</p>\n", xml_escape(n));
  for (const HtmlSection& s : page.sections) {
    out += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", xml_escape(s.id), xml_escape(s.title));
    for (const std::string& p : s.paragraphs) out += fmt::format("<p>{}</p>\n", xml_escape(p));
    for (const auto& [text, href] : s.links) {
      out += fmt::format("<p><a href=\"{}\">{}</a></p>\n", xml_escape(safe_href(href)), xml_escape(text));
    }
    for (const std::string& chart : s.charts) out += chart;
    if (!s.tables.empty()) {
      // Short tables open; long ones (a sweep's every row) folded, so the charts stay together.
      std::size_t rows = 0;
      for (const HtmlTable& t : s.tables) rows += t.rows.size();
      out += fmt::format("<details{}><summary>{} behind the chart ({} rows)</summary>\n", rows <= 12 ? " open" : "",
                         s.tables.size() == 1 ? "the table" : "the tables", rows);
      for (const HtmlTable& t : s.tables) out += html_table(t);
      out += "</details>\n";
    }
    out += "</section>\n";
  }
  out += fmt::format("<script>{}</script>\n</body>\n</html>\n", kCheckScript);
  return out;
}

}  // namespace commscale

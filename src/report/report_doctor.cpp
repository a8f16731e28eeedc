// `commscale report`'s section for `commscale doctor` files: the verdict and what it rests on, the
// suspects, the pair rounds as a heatmap of measured over expected (a slow node shows as a row and a
// column), and the checks.

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/charts.hpp"
#include "report/html_report.hpp"

namespace commscale {
namespace {

// Every row of a big job would make a page nobody can open: failures always, passes up to this.
constexpr std::size_t kMaxCheckRows = 2000;

std::string number_text(const JsonAt& c, std::string_view key) {
  const std::optional<double> v = c.optional_number(key);
  return v ? fmt::format("{:.4g}", *v) : "";
}

std::vector<std::string> check_row(const JsonAt& c) {
  return {c.string("status"),          c.string("phase"),          c.string("check"),        c.string("subject"),
          number_text(c, "measured"),  number_text(c, "expected"), c.string_or("unit", ""),  number_text(c, "ratio"),
          number_text(c, "threshold"), c.string_or("basis", ""),   c.string_or("detail", "")};
}

const std::vector<std::string>& check_header() {
  static const std::vector<std::string> header = {"status", "phase", "check", "subject", "measured", "expected",
                                                  "unit",   "ratio", "min",   "basis",   "detail"};
  return header;
}

// Sender x receiver: measured / expected of each pair transfer (the lowest where a pair met twice).
std::optional<Heatmap> pair_heatmap(const std::vector<JsonAt>& checks) {
  Heatmap h;
  h.title = "pair rounds: measured / expected, sender (row) to receiver (column)";
  h.unit = "ratio";
  std::map<std::pair<std::string, std::string>, double> ratio;
  for (const JsonAt& c : checks) {
    if (c.string("check") != "pair" || !c.optional_number("ratio")) continue;
    const std::string link = c.at("place").string_or("link", "");
    const std::size_t arrow = link.find(" -> ");
    if (arrow == std::string::npos) continue;
    const std::string from = link.substr(0, arrow);
    const std::string to = link.substr(arrow + 4);
    for (const std::string& u : {from, to}) {
      if (std::find(h.rows.begin(), h.rows.end(), u) == h.rows.end()) h.rows.push_back(u);
    }
    const auto key = std::make_pair(from, to);
    const double r = *c.optional_number("ratio");
    ratio[key] = ratio.count(key) > 0 ? std::min(ratio[key], r) : r;
  }
  if (ratio.empty() || h.rows.size() > 256) return std::nullopt;  // beyond that a heatmap is unreadable
  std::sort(h.rows.begin(), h.rows.end());
  h.columns = h.rows;
  h.values.assign(h.rows.size(), std::vector<std::optional<double>>(h.rows.size()));
  for (const auto& [key, r] : ratio) {
    const auto row = std::find(h.rows.begin(), h.rows.end(), key.first) - h.rows.begin();
    const auto col = std::find(h.rows.begin(), h.rows.end(), key.second) - h.rows.begin();
    h.values[static_cast<std::size_t>(row)][static_cast<std::size_t>(col)] = r;
  }
  return h;
}

HtmlSection doctor_section(const ResultFile& f) {
  const JsonAt root = root_of(f);
  const JsonAt config = root.at("config");
  HtmlSection s;
  s.id = "doctor-" + std::to_string(std::hash<std::string>{}(f.label) % 100000);
  s.title = "Doctor: " + f.label;
  if (root.has("verdict")) {
    const JsonAt v = root.at("verdict");
    s.paragraphs.push_back(fmt::format(
        "Verdict: {} (exit code {:.0f}): {:.0f} checks passed, {:.0f} failed, {:.0f} shown without a verdict, "
        "{:.0f} could not run.",
        v.value().at("passed").get<bool>() ? "PASS" : "FAIL", v.number("exit_code"), v.number("checks_passed"),
        v.number("checks_failed"), v.number("checks_info"), v.number("checks_not_run")));
  } else {
    s.paragraphs.push_back("The run did not finish: these are the checks it completed.");
  }
  s.paragraphs.push_back(fmt::format("{:.0f} ranks on {} hosts, backend {}; expectations: {}; threshold {:.2f}.",
                                     config.number("ranks"), config.at("hosts").size(), config.string("backend"),
                                     config.string("expectation_source"), config.number("min_ratio")));
  const std::vector<JsonAt> checks = root.array("checks");
  HtmlTable suspects{"suspects: what the failed checks name", {"kind", "name", "evidence"}, {}};
  for (const JsonAt& x : root.array("suspects")) {
    suspects.rows.push_back({x.string("kind"), x.string("name"), x.string("evidence")});
  }
  if (!suspects.rows.empty()) s.tables.push_back(std::move(suspects));
  if (const std::optional<Heatmap> h = pair_heatmap(checks)) s.charts.push_back(heatmap_svg(*h));
  HtmlTable table{"checks", check_header(), {}};
  std::size_t passes = 0;
  for (const JsonAt& c : checks) {
    if (c.string("status") == "pass" && ++passes > kMaxCheckRows) continue;
    table.rows.push_back(check_row(c));
  }
  if (passes > kMaxCheckRows) {
    table.caption = fmt::format(
        "checks: every one that did not pass, and the first {} of {} that passed (the JSON "
        "file has them all)",
        kMaxCheckRows, passes);
  }
  s.tables.push_back(std::move(table));
  return s;
}

}  // namespace

std::vector<HtmlSection> doctor_sections(const ResultRefs& doctor) {
  std::vector<HtmlSection> out;
  for (const ResultFile* f : doctor) out.push_back(doctor_section(*f));
  return out;
}

}  // namespace commscale

// `commscale report`'s section for `commscale doctor` files: the verdict and what it rests on, the
// suspects, the pair rounds as a heatmap of measured over expected (a slow node shows as a row and a
// column), and the checks.

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/charts.hpp"
#include "report/doctor_reporters.hpp"
#include "report/html_report.hpp"

namespace commscale {
namespace {

// Every row of a big job would make a page nobody can open: failures always, passes up to this.
constexpr std::size_t kMaxCheckRows = 2000;

std::string number_text(const std::optional<double>& v) { return v ? fmt::format("{:.4g}", *v) : ""; }

std::vector<std::string> check_row(const predict::DoctorCheck& c) {
  return {std::string(name(c.status)),
          c.phase,
          c.check,
          c.subject,
          number_text(c.measured),
          number_text(c.expected),
          c.unit,
          number_text(c.ratio()),
          number_text(c.threshold > 0.0 ? std::optional(c.threshold) : std::nullopt),
          c.basis,
          c.detail};
}

const std::vector<std::string>& check_header() {
  static const std::vector<std::string> header = {"status", "phase", "check", "subject", "measured", "expected",
                                                  "unit",   "ratio", "min",   "basis",   "detail"};
  return header;
}

// Sender x receiver: measured / expected of each pair transfer (the lowest where a pair met twice).
std::optional<Heatmap> pair_heatmap(const std::vector<predict::DoctorCheck>& checks) {
  Heatmap h;
  h.title = "pair rounds: measured / expected, sender (row) to receiver (column)";
  h.unit = "ratio";
  std::map<std::pair<std::string, std::string>, double> ratio;
  for (const predict::DoctorCheck& c : checks) {
    if (c.check != "pair" || !c.ratio()) continue;
    const std::string& link = c.place.link;
    const std::size_t arrow = link.find(" -> ");
    if (arrow == std::string::npos) continue;
    const std::string from = link.substr(0, arrow);
    const std::string to = link.substr(arrow + 4);
    for (const std::string& u : {from, to}) {
      if (std::find(h.rows.begin(), h.rows.end(), u) == h.rows.end()) h.rows.push_back(u);
    }
    const auto key = std::make_pair(from, to);
    const double r = *c.ratio();
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
  HtmlSection s;
  s.id = "doctor-" + std::to_string(std::hash<std::string>{}(f.label) % 100000);
  s.title = "Doctor: " + f.label;
  if (root.has("verdict")) {
    const predict::Verdict v = predict::verdict_from_json(root.at("verdict"));
    s.paragraphs.push_back(fmt::format(
        "Verdict: {} (exit code {}): {} checks passed, {} failed, {} shown without a verdict, {} could not run.",
        v.ok() ? "PASS" : "FAIL", v.ok() ? 0 : kDoctorBelowExpectation, v.passed, v.failed, v.info, v.not_run));
  } else {
    s.paragraphs.push_back("The run did not finish: these are the checks it completed.");
  }
  DoctorSetup config;
  from_json(root.at("config"), config);
  s.paragraphs.push_back(fmt::format("{} ranks on {} hosts, backend {}; expectations: {}; threshold {:.2f}.",
                                     config.ranks, config.hosts.size(), config.backend, config.expectation_source,
                                     config.min_ratio));
  std::vector<predict::DoctorCheck> checks;
  for (const JsonAt& c : root.array("checks")) predict::from_json(c, checks.emplace_back());
  HtmlTable suspects{"suspects: what the failed checks name", {"kind", "name", "evidence"}, {}};
  for (const JsonAt& x : root.array("suspects")) {
    predict::Suspect suspect;
    predict::from_json(x, suspect);
    suspects.rows.push_back({suspect.kind, suspect.name, suspect.evidence});
  }
  if (!suspects.rows.empty()) s.tables.push_back(std::move(suspects));
  if (const std::optional<Heatmap> h = pair_heatmap(checks)) s.charts.push_back(heatmap_svg(*h));
  HtmlTable table{"checks", check_header(), {}};
  std::size_t passes = 0;
  for (const predict::DoctorCheck& c : checks) {
    if (c.status == predict::CheckStatus::kPass && ++passes > kMaxCheckRows) continue;
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

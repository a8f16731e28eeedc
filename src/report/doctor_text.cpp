// `commscale doctor` as text: the setup, a table per phase, the suspects and the verdict.

#include <algorithm>
#include <map>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "core/size.hpp"
#include "core/stats.hpp"
#include "core/text_table.hpp"
#include "report/doctor_reporters.hpp"

namespace commscale {
namespace {

using predict::CheckStatus;
using predict::DoctorCheck;

std::string number(const std::optional<double>& v, const std::string& unit) {
  if (!v) return "-";
  return fmt::format("{:.4g} {}", *v, unit);
}

std::vector<std::string> row_of(const DoctorCheck& c) {
  const std::optional<double> r = c.ratio();
  return {std::string(name(c.status)),
          c.check,
          c.subject,
          number(c.measured, c.unit),
          number(c.expected, c.unit),
          r ? fmt::format("{:.3f}", *r) : "-",
          c.threshold > 0.0 ? fmt::format("{:.2f}", c.threshold) : "-",
          c.basis.empty() ? c.detail : c.basis};
}

TextTable new_table() {
  return TextTable({"status", "check", "subject", "measured>", "expected>", "ratio>", "min>", "basis"});
}

// Passing checks of one kind in one line: how many, and the lowest ratio among them.
std::string pass_summary(const std::string& check, const std::vector<const DoctorCheck*>& passed) {
  std::vector<double> ratios;
  const DoctorCheck* lowest = nullptr;
  for (const DoctorCheck* c : passed) {
    const std::optional<double> r = c->ratio();
    if (!r) continue;
    ratios.push_back(*r);
    if (lowest == nullptr || *r < *lowest->ratio()) lowest = c;
  }
  std::string text = fmt::format("pass  {}: {} checks", check, passed.size());
  if (lowest != nullptr) {
    text += fmt::format(", ratio median {:.3f}, lowest {:.3f} ({})", summarize(ratios).median, *lowest->ratio(),
                        lowest->subject);
  }
  return text;
}

class TextDoctorReporter final : public DoctorReporter {
 public:
  explicit TextDoctorReporter(std::ostream& out) : out_(out) {}

  void begin(const DoctorSetup& s) override {
    const RunContext& c = s.context;
    fmt::print(out_, "# commscale {} ({}) doctor: {} ranks on {} host{}, backend {} ({})\n", c.commscale_version,
               c.git_sha, s.ranks, s.hosts.size(), s.hosts.size() == 1 ? "" : "s", c.backend, c.comm_library);
    if (!c.backend_note.empty()) fmt::print(out_, "# {}\n", c.backend_note);
    fmt::print(out_, "# expectations: {}\n", s.expectation_source);
    for (const std::string& n : s.expectation_notes) fmt::print(out_, "#   {}\n", n);
    fmt::print(out_,
               "# every check: measured, expected, ratio = measured / expected, and the ratio it fails below "
               "(--min-ratio {:.2f})\n",
               s.min_ratio);
    std::string phases;
    for (const std::string& p : s.phases) phases += (phases.empty() ? "" : " ") + p;
    fmt::print(out_, "# phases: {}; collectives of {}, pair transfers of {}\n", phases, format_size(s.size),
               format_size(s.pair_size));
    if (s.pair_units != "none") {
      fmt::print(out_, "# pair rounds: {} {}, {} round{} (ceil(log2 {})), each pair timed both ways\n",
                 s.pair_unit_count, s.pair_units, s.rounds, s.rounds == 1 ? "" : "s", s.pair_unit_count);
    }
    out_ << std::flush;
  }

  void phase_begin(const std::string& phase, const std::string& what) override {
    fmt::print(out_, "\n## {}: {}\n", phase, what);
    out_ << std::flush;
    checks_.clear();
  }

  // Checks outside a phase (the XIDs of the whole run, gathered at the end) wait for end().
  void check(const DoctorCheck& c) override { checks_.push_back(c); }

  void phase_end(const DoctorPhaseTime& t) override {
    print_table();
    fmt::print(out_, "## {}: {:.1f} s\n", t.phase, t.seconds);
    out_ << std::flush;
    checks_.clear();
  }

  void end(const DoctorReport& r) override {
    if (!checks_.empty()) {
      fmt::print(out_, "\n## gpu: XID events over the whole run\n");
      print_table();
    }
    fmt::print(out_, "\n## suspects{}\n", r.suspects.empty() ? ": none" : "");
    for (const predict::Suspect& s : r.suspects) fmt::print(out_, "{:<5} {}: {}\n", s.kind, s.name, s.evidence);
    std::string phases;
    for (const DoctorPhaseTime& p : r.phases) {
      phases += fmt::format("{}{} {:.1f} s", phases.empty() ? "" : ", ", p.phase, p.seconds);
      if (p.phase != "pairs" || r.round_seconds.empty()) continue;
      std::string rounds;
      for (double t : r.round_seconds) rounds += fmt::format("{}{:.1f}", rounds.empty() ? "" : ", ", t);
      phases += fmt::format(" (rounds: {} s)", rounds);
    }
    fmt::print(out_, "## time: {}; total {:.1f} s\n", phases, r.total_seconds);
    const predict::Verdict& v = r.verdict;
    const int judged = v.passed + v.failed;
    if (v.ok()) {
      fmt::print(out_,
                 "## verdict: PASS: {} of {} judged checks at or above expectation; {} shown unjudged, {} not run\n",
                 v.passed, judged, v.info, v.not_run);
    } else {
      fmt::print(out_,
                 "## verdict: FAIL: {} of {} judged checks below expectation (exit code {}); {} shown unjudged, {} "
                 "not run\n",
                 v.failed, judged, kDoctorBelowExpectation, v.info, v.not_run);
    }
    out_ << std::flush;
  }

 private:
  void print_table() {
    if (checks_.empty()) return;
    TextTable t = new_table();
    std::map<std::string, std::vector<const DoctorCheck*>> passed;
    const bool full = checks_.size() <= kDoctorTextFullTable;
    for (const DoctorCheck& c : checks_) {
      if (full || c.status != CheckStatus::kPass) {
        t.add(row_of(c));
      } else {
        passed[c.check].push_back(&c);
      }
    }
    out_ << t.render();
    for (const auto& [check, list] : passed) out_ << pass_summary(check, list) << "\n";
    // What a failed or unjudged check also says, when its basis took the table's last column.
    for (const DoctorCheck& c : checks_) {
      if (c.status != CheckStatus::kPass && !c.basis.empty() && !c.detail.empty()) {
        fmt::print(out_, "  {} {}: {}\n", name(c.status), c.subject, c.detail);
      }
    }
  }

  std::ostream& out_;
  std::vector<DoctorCheck> checks_;
};

}  // namespace

std::unique_ptr<DoctorReporter> make_text_doctor_reporter(std::ostream& out) {
  return std::make_unique<TextDoctorReporter>(out);
}

}  // namespace commscale

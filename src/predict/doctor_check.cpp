#include "predict/doctor_check.hpp"

#include <fmt/format.h>

namespace commscale::predict {

std::string_view name(CheckStatus s) noexcept {
  switch (s) {
    case CheckStatus::kPass:
      return "pass";
    case CheckStatus::kFail:
      return "FAIL";
    case CheckStatus::kInfo:
      return "info";
    case CheckStatus::kNotRun:
      return "not run";
  }
  return "?";
}

std::optional<double> DoctorCheck::ratio() const noexcept {
  if (!measured || !expected || *expected <= 0.0) return std::nullopt;
  return *measured / *expected;
}

DoctorCheck judge(DoctorCheck check, double min_ratio) {
  if (!check.measured) {
    check.status = CheckStatus::kInfo;
    if (check.detail.empty()) check.detail = "nothing was measured";
    return check;
  }
  const std::optional<double> r = check.ratio();
  if (!r) {
    check.status = CheckStatus::kInfo;
    if (check.detail.empty()) check.detail = "not judged: no expectation";
    return check;
  }
  check.threshold = min_ratio;
  check.status = *r >= min_ratio ? CheckStatus::kPass : CheckStatus::kFail;
  return check;
}

DoctorCheck not_run(std::string phase, std::string check, std::string subject, std::string why) {
  DoctorCheck c;
  c.phase = std::move(phase);
  c.check = std::move(check);
  c.subject = std::move(subject);
  c.status = CheckStatus::kNotRun;
  c.detail = std::move(why);
  return c;
}

std::string describe_numbers(const DoctorCheck& c) {
  if (!c.measured) return c.detail;
  std::string text = fmt::format("{:.4g} {}", *c.measured, c.unit);
  if (c.expected) text += fmt::format(" against {:.4g} expected", *c.expected);
  if (const std::optional<double> r = c.ratio()) text += fmt::format(" ({:.3f} of it)", *r);
  if (c.threshold > 0.0) text += fmt::format(", threshold {:.2f}", c.threshold);
  return text;
}

std::vector<Suspect> suspects_of(const std::vector<DoctorCheck>& checks) {
  std::vector<Suspect> out;
  for (const DoctorCheck& c : checks) {
    if (c.status != CheckStatus::kFail || c.phase == "pairs") continue;
    Suspect s;
    s.kind = c.check.starts_with("nic")             ? "nic"
             : c.check == "p2p_copy"                ? "link"
             : c.check == "node_all_reduce"         ? "node"
             : c.phase == "job"                     ? "job"
             : c.place.gpu >= 0 || c.phase == "gpu" ? "gpu"
                                                    : "node";
    s.name = c.subject;
    s.place = c.place;
    s.evidence = fmt::format("{}: {}", c.check, describe_numbers(c));
    if (c.measured && !c.detail.empty()) s.evidence += "; " + c.detail;
    if (s.kind == "job") s.evidence += "; the pair rounds name the node or link behind it, if one is";
    out.push_back(std::move(s));
  }
  return out;
}

Verdict tally(const std::vector<DoctorCheck>& checks) noexcept {
  Verdict v;
  for (const DoctorCheck& c : checks) {
    switch (c.status) {
      case CheckStatus::kPass:
        ++v.passed;
        break;
      case CheckStatus::kFail:
        ++v.failed;
        break;
      case CheckStatus::kInfo:
        ++v.info;
        break;
      case CheckStatus::kNotRun:
        ++v.not_run;
        break;
    }
  }
  return v;
}

}  // namespace commscale::predict

// `commscale doctor` as JSON (one document, rewritten as each phase ends) and JSON Lines (a line per
// check as it is judged): schema_version, kind "commscale-doctor", the context block, the setup, every
// check with measured, expected, ratio and threshold, the suspects and the verdict.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

#include "core/json_optional.hpp"
#include "core/jsonl_file.hpp"
#include "core/rewritten_json_file.hpp"
#include "report/doctor_reporters.hpp"

namespace commscale {
namespace {

nlohmann::json place_json(const predict::CheckPlace& p) {
  nlohmann::json j = nlohmann::json::object();
  if (!p.host.empty()) j["host"] = p.host;
  if (p.rank >= 0) j["rank"] = p.rank;
  if (p.gpu >= 0) j["gpu"] = p.gpu;
  if (!p.pci_bus_id.empty()) j["pci_bus_id"] = p.pci_bus_id;
  if (!p.link.empty()) j["link"] = p.link;
  if (!p.nic.empty()) j["nic"] = p.nic;
  return j;
}

nlohmann::json phase_json(const DoctorPhaseTime& p) {
  return {{"phase", p.phase}, {"seconds", p.seconds}, {"what", p.what}};
}

nlohmann::json verdict_json(const predict::Verdict& v) {
  return {{"passed", v.ok()},          {"exit_code", v.ok() ? 0 : kDoctorBelowExpectation},
          {"checks_passed", v.passed}, {"checks_failed", v.failed},
          {"checks_info", v.info},     {"checks_not_run", v.not_run}};
}

// Rewritten as each phase ends (core/rewritten_json_file.hpp).
class JsonDoctorReporter final : public DoctorReporter {
 public:
  explicit JsonDoctorReporter(std::string path) : file_(std::move(path)) {}

  void begin(const DoctorSetup& s) override {
    file_.doc() = {{"schema_version", kDoctorSchemaVersion},
                   {"kind", "commscale-doctor"},
                   {"complete", false},
                   {"context", s.context},
                   {"config", s},
                   {"phases", nlohmann::json::array()},
                   {"checks", nlohmann::json::array()},
                   {"suspects", nlohmann::json::array()}};
    file_.step();
  }
  void check(const predict::DoctorCheck& c) override { file_.doc()["checks"].push_back(c); }
  void phase_end(const DoctorPhaseTime& p) override {
    file_.doc()["phases"].push_back(phase_json(p));
    file_.step();
  }
  void end(const DoctorReport& r) override {
    nlohmann::json& doc = file_.doc();
    doc["suspects"] = r.suspects;
    doc["verdict"] = verdict_json(r.verdict);
    doc["total_seconds"] = r.total_seconds;
    doc["round_seconds"] = r.round_seconds;
    doc["complete"] = true;
    file_.finish();
  }

 private:
  RewrittenJsonFile file_;
};

class JsonLinesDoctorReporter final : public DoctorReporter {
 public:
  explicit JsonLinesDoctorReporter(std::string path) : file_(std::move(path)) {}

  void begin(const DoctorSetup& s) override {
    file_.append({{"record", "header"},
                  {"kind", "commscale-doctor"},
                  {"schema_version", kDoctorSchemaVersion},
                  {"context", s.context},
                  {"config", s}});
  }
  void check(const predict::DoctorCheck& c) override {
    nlohmann::json line = c;
    line["record"] = "check";
    file_.append(line);
  }
  void phase_end(const DoctorPhaseTime& p) override {
    nlohmann::json line = phase_json(p);
    line["record"] = "phase";
    file_.append(line);
  }
  void end(const DoctorReport& r) override {
    for (const predict::Suspect& s : r.suspects) {
      nlohmann::json line = s;
      line["record"] = "suspect";
      file_.append(line);
    }
    nlohmann::json line = verdict_json(r.verdict);
    line["record"] = "verdict";
    line["total_seconds"] = r.total_seconds;
    line["round_seconds"] = r.round_seconds;
    file_.append(line);
  }

 private:
  JsonLinesFile file_;
};

}  // namespace

namespace predict {

void to_json(nlohmann::json& out, const DoctorCheck& c) {
  out = {{"phase", c.phase},
         {"check", c.check},
         {"subject", c.subject},
         {"place", place_json(c.place)},
         {"status", std::string(name(c.status))},
         {"measured", optional_json(c.measured)},
         {"expected", optional_json(c.expected)},
         {"ratio", optional_json(c.ratio())},
         {"threshold", c.threshold > 0.0 ? nlohmann::json(c.threshold) : nlohmann::json()},
         {"unit", c.unit},
         {"basis", c.basis},
         {"detail", c.detail}};
}

void to_json(nlohmann::json& out, const Suspect& s) {
  out = {{"kind", s.kind}, {"name", s.name}, {"place", place_json(s.place)}, {"evidence", s.evidence}};
}

}  // namespace predict

void to_json(nlohmann::json& out, const DoctorSetup& s) {
  out = {{"backend", s.backend},
         {"min_ratio", s.min_ratio},
         {"hosts", s.hosts},
         {"ranks", s.ranks},
         {"size_bytes", s.size.count()},
         {"pair_size_bytes", s.pair_size.count()},
         {"pair_units", s.pair_units},
         {"pair_unit_count", s.pair_unit_count},
         {"rounds", s.rounds},
         {"expectation_source", s.expectation_source},
         {"expectation_notes", s.expectation_notes},
         {"phases", s.phases}};
}

namespace {

// in[key], an array of strings; absent (or null) is none unless `required`.
std::vector<std::string> strings_at(const JsonAt& in, std::string_view key, bool required = false) {
  std::vector<std::string> out;
  if (!required && !in.has(key)) return out;
  for (const JsonAt& v : in.array(key)) {
    if (!v.value().is_string()) throw InputError(v.where(), fmt::format("is a JSON {}", v.value().type_name()), "a string");
    out.push_back(v.value().get<std::string>());
  }
  return out;
}

predict::CheckPlace place_from_json(const JsonAt& in) {
  predict::CheckPlace p;
  if (!in.has("place")) return p;
  const JsonAt place = in.at("place");
  p.host = place.string_or("host", "");
  p.rank = static_cast<int>(place.number_or("rank", -1));
  p.gpu = static_cast<int>(place.number_or("gpu", -1));
  p.pci_bus_id = place.string_or("pci_bus_id", "");
  p.link = place.string_or("link", "");
  p.nic = place.string_or("nic", "");
  return p;
}

predict::CheckStatus status_from_json(const JsonAt& in) {
  const std::string status = in.string("status");
  for (const auto s : {predict::CheckStatus::kPass, predict::CheckStatus::kFail, predict::CheckStatus::kInfo,
                       predict::CheckStatus::kNotRun}) {
    if (status == name(s)) return s;
  }
  throw InputError(in.at("status").where(), fmt::format("is \"{}\"", status), "pass, FAIL, info or not run");
}

}  // namespace

namespace predict {

void from_json(const JsonAt& in, DoctorCheck& c) {
  c = DoctorCheck{};
  c.status = status_from_json(in);
  c.phase = in.string("phase");
  c.check = in.string("check");
  c.subject = in.string("subject");
  c.place = place_from_json(in);
  c.measured = in.optional_number("measured");
  c.expected = in.optional_number("expected");
  c.threshold = in.number_or("threshold", 0.0);
  c.unit = in.string_or("unit", "");
  c.basis = in.string_or("basis", "");
  c.detail = in.string_or("detail", "");
}

void from_json(const JsonAt& in, Suspect& s) {
  s = Suspect{};
  s.kind = in.string("kind");
  s.name = in.string("name");
  s.place = place_from_json(in);
  s.evidence = in.string("evidence");
}

Verdict verdict_from_json(const JsonAt& in) {
  return {static_cast<int>(in.number("checks_passed")), static_cast<int>(in.number("checks_failed")),
          static_cast<int>(in.number("checks_info")), static_cast<int>(in.number("checks_not_run"))};
}

}  // namespace predict

void from_json(const JsonAt& in, DoctorSetup& s) {
  s = DoctorSetup{};
  s.backend = in.string("backend");
  s.min_ratio = in.number("min_ratio");
  s.hosts = strings_at(in, "hosts", true);
  s.ranks = static_cast<int>(in.number("ranks"));
  s.size = Bytes(static_cast<std::uint64_t>(in.number_or("size_bytes", 0.0)));
  s.pair_size = Bytes(static_cast<std::uint64_t>(in.number_or("pair_size_bytes", 0.0)));
  s.pair_units = in.string_or("pair_units", "");
  s.pair_unit_count = static_cast<int>(in.number_or("pair_unit_count", 0.0));
  s.rounds = static_cast<int>(in.number_or("rounds", 0.0));
  s.expectation_source = in.string("expectation_source");
  s.expectation_notes = strings_at(in, "expectation_notes");
  s.phases = strings_at(in, "phases");
}

std::unique_ptr<DoctorReporter> make_json_doctor_reporter(std::string path) {
  return std::make_unique<JsonDoctorReporter>(std::move(path));
}

std::unique_ptr<DoctorReporter> make_jsonl_doctor_reporter(std::string path) {
  return std::make_unique<JsonLinesDoctorReporter>(std::move(path));
}

}  // namespace commscale

// `commscale doctor` as JSON (one document, rewritten as each phase ends) and JSON Lines (a line per
// check as it is judged): schema_version, kind "commscale-doctor", the context block, the setup, every
// check with measured, expected, ratio and threshold, the suspects and the verdict.

#include <nlohmann/json.hpp>

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

std::unique_ptr<DoctorReporter> make_json_doctor_reporter(std::string path) {
  return std::make_unique<JsonDoctorReporter>(std::move(path));
}

std::unique_ptr<DoctorReporter> make_jsonl_doctor_reporter(std::string path) {
  return std::make_unique<JsonLinesDoctorReporter>(std::move(path));
}

}  // namespace commscale

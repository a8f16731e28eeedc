#pragma once

// Reporters for `commscale doctor`: text (a table per phase as each ends, then the suspects and the
// verdict), JSON (rewritten atomically as each phase ends, "complete": false until the end) and JSON
// Lines (a line per check as it is judged). Schema: src/bench/DOCTOR.md.

#include <iosfwd>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "bench/doctor_result.hpp"
#include "core/json_at.hpp"

namespace commscale {

[[nodiscard]] std::unique_ptr<DoctorReporter> make_text_doctor_reporter(std::ostream& out);
[[nodiscard]] std::unique_ptr<DoctorReporter> make_json_doctor_reporter(std::string path);
[[nodiscard]] std::unique_ptr<DoctorReporter> make_jsonl_doctor_reporter(std::string path);

void to_json(nlohmann::json& out, const DoctorSetup& setup);
namespace predict {  // beside the types, where nlohmann's lookup finds them
void to_json(nlohmann::json& out, const DoctorCheck& check);
void to_json(nlohmann::json& out, const Suspect& suspect);
}  // namespace predict

// The inverses, for `commscale report`; errors name the file and key. A setup needs backend,
// min_ratio, hosts, ranks and expectation_source; a check phase, check, subject and status (as
// name(CheckStatus) writes it), the rest when present (its ratio is derived, not read); a suspect
// kind, name and evidence; a verdict its four counts (passed and exit_code follow from them). The
// setup's context is read from the document's own "context", not from "config".
void from_json(const JsonAt& in, DoctorSetup& setup);
namespace predict {
void from_json(const JsonAt& in, DoctorCheck& check);
void from_json(const JsonAt& in, Suspect& suspect);
[[nodiscard]] Verdict verdict_from_json(const JsonAt& in);
}  // namespace predict

// Phases with more checks than this print their failures and a summary per kind of check, not
// every passing check (the JSON has them all).
inline constexpr std::size_t kDoctorTextFullTable = 64;

}  // namespace commscale

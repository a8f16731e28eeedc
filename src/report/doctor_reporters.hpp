#pragma once

// Reporters for `commscale doctor`: text (a table per phase as each ends, then the suspects and the
// verdict), JSON (rewritten atomically as each phase ends, "complete": false until the end) and JSON
// Lines (a line per check as it is judged). Schema: README, "commscale doctor".

#include <iosfwd>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "bench/doctor_result.hpp"

namespace commscale {

[[nodiscard]] std::unique_ptr<DoctorReporter> make_text_doctor_reporter(std::ostream& out);
[[nodiscard]] std::unique_ptr<DoctorReporter> make_json_doctor_reporter(std::string path);
[[nodiscard]] std::unique_ptr<DoctorReporter> make_jsonl_doctor_reporter(std::string path);

void to_json(nlohmann::json& out, const DoctorSetup& setup);
namespace predict {  // beside the types, where nlohmann's lookup finds them
void to_json(nlohmann::json& out, const DoctorCheck& check);
void to_json(nlohmann::json& out, const Suspect& suspect);
}  // namespace predict

// Phases with more checks than this print their failures and a summary per kind of check, not
// every passing check (the JSON has them all).
inline constexpr std::size_t kDoctorTextFullTable = 64;

}  // namespace commscale

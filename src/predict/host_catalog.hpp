#pragma once

// The host costs of a framework (program/host_costs.hpp): from a calibration profile's `host` rows
// where it has the framework, else from the catalog's `topologies/frameworks.json`, whose rows carry
// the same object as a profile's, with the measurement each figure came from:
//
// {
//   "schema_version": 1,
//   "kind": "frameworks",
//   "frameworks": [ {"framework": "commscale", "source": "...", "issue_us": {...}, "step_us": 40,
//                    "sync": "none"}, ... ]
// }
//
// "none" always exists and costs nothing: device time alone (the predictor before host costs).

#include <optional>
#include <string>
#include <vector>

#include "predict/calibration.hpp"

namespace commscale::predict {

inline constexpr std::string_view kNoHost = "none";

// Every framework of the catalog file, in file order (none first). Throws InputError naming the file
// and key of the first problem.
[[nodiscard]] std::vector<HostCosts> catalog_host_costs();
[[nodiscard]] std::vector<HostCosts> read_frameworks_file(const std::string& path);

// The costs `framework` runs at: the profile's row, else the catalog's. Throws InputError naming
// `flag` and the frameworks there are when neither has it.
[[nodiscard]] HostCosts host_costs_for(const std::string& framework, const CalibrationProfile* profile,
                                       const std::string& flag);

}  // namespace commscale::predict

#pragma once

// A comparison of clusters as JSON and as the table `commscale compare` prints.

#include <cstddef>
#include <ostream>

#include <nlohmann/json.hpp>

#include "predict/compare.hpp"

namespace commscale::predict {

[[nodiscard]] nlohmann::json compare_to_json(const CompareResult& r, const CompareInputs& in);
// The inverse, for `commscale report`: the model, each cluster (gpus required; label, cluster, gpu,
// nodes, candidates, fitting, closest, prices and costs when present; a best plan's plan and summary
// into `prediction`, its stage-model step time into `best`) and the scaling sweep (each point's gpus,
// and with a plan its tokens_per_s, step_time_s and scaling_efficiency); global_batch (absent: 0) into
// `in.search`. Errors name the file and key. The assumptions, the memory of each best plan and the
// rest of a prediction are not read back.
void compare_from_json(const JsonAt& doc, CompareResult& r, CompareInputs& in);
void print_compare(std::ostream& out, const CompareResult& r, const CompareInputs& in);

}  // namespace commscale::predict

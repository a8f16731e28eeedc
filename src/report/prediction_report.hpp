#pragma once

// The prediction as JSON (the figure names of `train -J`) and as the text `commscale predict` prints.

#include <cstddef>
#include <ostream>

#include <nlohmann/json.hpp>

#include "predict/prediction.hpp"

namespace commscale::predict {

// The JSON document (-J, --json): schema_version, kind "commscale-prediction", model, plan, cluster,
// "summary" (train's job summary names), groups, exposed_comm_by_link_s, memory_per_rank, fit, notes.
[[nodiscard]] nlohmann::json prediction_to_json(const Prediction& p);
void print_prediction(std::ostream& out, const Prediction& p);

}  // namespace commscale::predict

#pragma once

// `commscale predict --collective`: the predicted sweep as text (bench's size, time, algbw and busbw
// columns, with the algorithm and protocol the model chose and its latency term) and as JSON.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "predict/collective_sweep.hpp"
#include "predict/target.hpp"

namespace commscale::predict {

// The JSON document (-J, --json): schema_version 1, kind "commscale-collective-prediction", cluster,
// nodes, ranks, calibration (file or null), group (path class, bus bandwidth, latencies), results (one
// object per row: collective, size_bytes, time_us, latency_us, algbw_GBps, busbw_GBps, algo, proto,
// calibrated), notes.
[[nodiscard]] nlohmann::json collective_prediction_to_json(const Target& target, const CollectiveSweepPrediction& p);
void print_collective_prediction(std::ostream& out, const Target& target, const CollectiveSweepPrediction& p);

}  // namespace commscale::predict

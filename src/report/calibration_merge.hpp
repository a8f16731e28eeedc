#pragma once

// Merging calibration profiles (`commscale calibrate --merge`): one run measures one transport, so a
// profile of a machine is the merge of several runs. Works on the file form (src/predict/CALIBRATION.md).

#include <string>

#include <nlohmann/json.hpp>

namespace commscale {

// Adds the rows of `more` to `base`: GEMM and memory rows replace rows of the same shape, collective
// curves replace curves of the same collective, ranks, nodes and path class, attention rows those of
// the same case, host rows those of the same framework, interference rows those of the same probe
// setting, and `device` replaces `device`; machine.source records both. Both must be of the same GPU: InputError naming `where` otherwise.
void merge_calibration(nlohmann::ordered_json& base, const nlohmann::ordered_json& more, const std::string& where);

}  // namespace commscale

#pragma once

// A comparison of clusters as JSON and as the table `commscale compare` prints.

#include <cstddef>
#include <ostream>

#include <nlohmann/json.hpp>

#include "predict/compare.hpp"

namespace commscale::predict {

[[nodiscard]] nlohmann::json compare_to_json(const CompareResult& r, const CompareInputs& in);
void print_compare(std::ostream& out, const CompareResult& r, const CompareInputs& in);

}  // namespace commscale::predict

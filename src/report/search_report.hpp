#pragma once

// A plan search as JSON and as the ranked table `commscale search` prints.

#include <cstddef>
#include <ostream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "predict/search.hpp"

namespace commscale::predict {

[[nodiscard]] nlohmann::json search_to_json(const SearchResult& r, const SearchOptions& options);
// The inverse, for `commscale report`: candidates, fitting and top (into `ranked`) required, rank_by
// into `options`, the rest when present (absent or null: the default); reasons and costs are not read
// back. Errors name the file and key.
void search_from_json(const JsonAt& in, SearchResult& r, SearchOptions& options);
// `predict_flags`: the flags besides the plan's ("--cluster C --model M ...") for the suggested
// `commscale predict` of the best plan, which must paste as it is.
void print_search(std::ostream& out, const SearchResult& r, const SearchOptions& options,
                  std::string_view predict_flags);

}  // namespace commscale::predict

#pragma once

// A plan search as JSON and as the ranked table `commscale search` prints.

#include <cstddef>
#include <ostream>

#include <nlohmann/json.hpp>

#include "predict/search.hpp"

namespace commscale::predict {

[[nodiscard]] nlohmann::json search_to_json(const SearchResult& r, const SearchOptions& options);
void print_search(std::ostream& out, const SearchResult& r, const SearchOptions& options);

}  // namespace commscale::predict

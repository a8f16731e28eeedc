#pragma once

// A timeline as a Chrome trace (the JSON Trace Event Format), which Perfetto (ui.perfetto.dev) and
// chrome://tracing open: one process per rank, one thread per stream, one complete event per op.
// Steps are laid end to end, each starting where the previous one ended.

#include <nlohmann/json.hpp>

#include "program/op.hpp"
#include "program/timeline.hpp"

namespace commscale {

[[nodiscard]] nlohmann::json chrome_trace(const ProgramSet& set, const Timeline& timeline);

}  // namespace commscale

#pragma once

// What `commscale p2p` prints and writes: bandwidth and latency matrices as text (row: source,
// column: destination; each bandwidth also as a fraction of its link's line rate), a JSON document
// with schema_version, the context block, every sample and its statistics, and CSV, one line per
// measurement. Pure functions of a P2pReport.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "bench/p2p_result.hpp"

namespace commscale {

inline constexpr int kP2pSchemaVersion = 1;

[[nodiscard]] std::string format_p2p_text(const P2pReport& report);
[[nodiscard]] nlohmann::json p2p_json(const P2pReport& report);
[[nodiscard]] std::string p2p_csv(const P2pReport& report);

// "372.10 (83%)", "372.10" without a line rate, "n/a" when not measured.
[[nodiscard]] std::string bandwidth_cell(const BandwidthResult& r);

}  // namespace commscale

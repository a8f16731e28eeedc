#pragma once

// What `commscale p2p` prints and writes: bandwidth and latency matrices as text (row: source,
// column: destination; each bandwidth also as a fraction of its link's line rate), a JSON document
// with schema_version, the context block, every sample and its statistics, and CSV, one line per
// measurement. Pure functions of a P2pReport.

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "bench/p2p_result.hpp"
#include "core/json_at.hpp"

namespace commscale {

inline constexpr int kP2pSchemaVersion = 1;

[[nodiscard]] std::string format_p2p_text(const P2pReport& report);
[[nodiscard]] nlohmann::json p2p_json(const P2pReport& report);
// "p2p" or "staged", as the JSON and CSV name a pair's path.
[[nodiscard]] std::string_view path_name(PeerPath path);
// The inverse of p2p_json, for `commscale report`: gpus (each with its index, its place in the list), pairs
// (src, dst) and host (gpu) required; a measurement that is null or absent was not measured, one
// that is there needs bw_GBps (latency: latency_ns, its median); the rest when present (path absent:
// p2p). The context is read from the document's "context"; config, notes and the samples' summaries
// are not read back (a bandwidth's fraction of its line rate is derived). Errors name file and key.
void p2p_from_json(const JsonAt& in, P2pReport& report);
[[nodiscard]] std::string p2p_csv(const P2pReport& report);

// "372.10 (83%)", "372.10" without a line rate, "n/a" when not measured.
[[nodiscard]] std::string bandwidth_cell(const BandwidthResult& r);

}  // namespace commscale

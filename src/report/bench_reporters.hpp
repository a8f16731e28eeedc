#pragma once

// Reporters for `commscale bench`: the nccl-tests-style text table (streamed as rows arrive), JSON
// and CSV files (rewritten atomically as rows arrive, so an interrupted run keeps what it measured) and
// JSON Lines (appended as rows arrive).

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/result.hpp"
#include "core/json_at.hpp"

namespace commscale {

inline constexpr int kBenchSchemaVersion = 1;

[[nodiscard]] std::unique_ptr<BenchReporter> make_text_bench_reporter(std::ostream& out);
[[nodiscard]] std::unique_ptr<BenchReporter> make_json_bench_reporter(std::string path);
[[nodiscard]] std::unique_ptr<BenchReporter> make_csv_bench_reporter(std::string path);
// One progress line on `out` (stderr, when it is a terminal) for a sweep of `rows` rows; null: none.
[[nodiscard]] std::unique_ptr<BenchReporter> make_progress_bench_reporter(std::ostream* out, std::size_t rows);
// A line per row, appended and flushed as rows arrive (core/jsonl_file.hpp).
[[nodiscard]] std::unique_ptr<BenchReporter> make_jsonl_bench_reporter(std::string path);

void to_json(nlohmann::json& out, const BenchRow& row);
void to_json(nlohmann::json& out, const BenchSetup& setup);
// The inverses, for `commscale report`. A row needs collective, type, size_bytes and, in each
// placement, time_us, algbw_GBps and busbw_GBps (names as to_json writes them); redop, root, count,
// wrong (null: not checked) and samples_us are read when present, the samples' summary is recomputed
// from samples_us. A setup is read as far as the report uses it: group_size (absent: 0, unknown),
// groups and timing; its options, context and group_ranks are not read back.
void from_json(const JsonAt& in, BenchRow& row);
void from_json(const JsonAt& in, BenchSetup& setup);

// The CSV header and the lines of one row (one per placement), without trailing newlines.
[[nodiscard]] std::string bench_csv_header();
[[nodiscard]] std::vector<std::string> bench_csv_lines(const BenchRow& row, int ranks);

}  // namespace commscale

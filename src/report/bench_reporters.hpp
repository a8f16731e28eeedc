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

namespace commscale {

inline constexpr int kBenchSchemaVersion = 1;

[[nodiscard]] std::unique_ptr<BenchReporter> make_text_bench_reporter(std::ostream& out);
[[nodiscard]] std::unique_ptr<BenchReporter> make_json_bench_reporter(std::string path);
[[nodiscard]] std::unique_ptr<BenchReporter> make_csv_bench_reporter(std::string path);
// One progress line on `out` (stderr, when it is a terminal) for a sweep of `rows` rows; null: none.
[[nodiscard]] std::unique_ptr<BenchReporter> make_progress_bench_reporter(std::ostream* out, std::size_t rows);
// A line per row, appended and flushed as rows arrive (core/jsonl_file.hpp).
[[nodiscard]] std::unique_ptr<BenchReporter> make_jsonl_bench_reporter(std::string path);

// Forwards every call to each reporter in turn.
class BenchReporterList final : public BenchReporter {
 public:
  void add(std::unique_ptr<BenchReporter> reporter) { reporters_.push_back(std::move(reporter)); }
  void begin(const BenchSetup& setup) override;
  void row(const BenchRow& row) override;
  void collective_end(const CollectiveSummary& summary) override;
  void end(const BenchSummary& summary) override;

 private:
  std::vector<std::unique_ptr<BenchReporter>> reporters_;
};

void to_json(nlohmann::json& out, const BenchRow& row);
void to_json(nlohmann::json& out, const BenchSetup& setup);

// The CSV header and the lines of one row (one per placement), without trailing newlines.
[[nodiscard]] std::string bench_csv_header();
[[nodiscard]] std::vector<std::string> bench_csv_lines(const BenchRow& row, int ranks);

}  // namespace commscale

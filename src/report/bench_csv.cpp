#include <fmt/format.h>

#include "core/file_rewriter.hpp"
#include "report/bench_reporters.hpp"

namespace commscale {
namespace {

// Rewritten after every row by a writer thread, as the JSON file (core/file_rewriter.hpp), the last
// write flushed to disk; a device, FIFO or stream gets it once, at the end.
class CsvBenchReporter final : public BenchReporter {
 public:
  explicit CsvBenchReporter(std::string path) : file_(std::move(path)) {}

  void begin(const BenchSetup& setup) override {
    ranks_ = setup.group_size;
    text_ = bench_csv_header() + "\n";
    file_.rewrite(text_);
  }

  void row(const BenchRow& row) override {
    for (const std::string& line : bench_csv_lines(row, ranks_)) text_ += line + "\n";
    file_.rewrite(text_);
  }

  void end(const BenchSummary&) override { file_.finish(text_); }

 private:
  FileRewriter file_;
  std::string text_;
  int ranks_ = 1;
};

}  // namespace

std::string bench_csv_header() {
  return "collective,type,redop,root,size_bytes,count,ranks,placement,time_us,sample_median_us,sample_min_us,"
         "sample_max_us,sample_p99_us,sample_cv,algbw_GBps,busbw_GBps,wrong";
}

std::vector<std::string> bench_csv_lines(const BenchRow& row, int ranks) {
  std::vector<std::string> lines;
  const std::pair<std::string_view, const PlacementResult*> placements[] = {{"out_of_place", &row.out_of_place},
                                                                            {"in_place", &row.in_place}};
  for (const auto& [placement, p] : placements) {
    const Summary& t = p->sample_stats;
    lines.push_back(fmt::format("{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.5f},{:.4f},{:.4f},{}",
                                name(row.collective), name(row.type), row.op ? name(*row.op) : "",
                                row.root ? fmt::to_string(*row.root) : "", row.size.count(), row.count, ranks,
                                placement, p->time_us, t.median, t.min, t.max, t.p99, t.cv, p->algbw.value(),
                                p->busbw.value(), p->checked ? fmt::to_string(p->wrong) : ""));
  }
  return lines;
}

std::unique_ptr<BenchReporter> make_csv_bench_reporter(std::string path) {
  return std::make_unique<CsvBenchReporter>(std::move(path));
}

}  // namespace commscale

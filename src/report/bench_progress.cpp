// The progress line of a bench sweep: a reporter beside the others on rank 0, so the sweep itself
// never prints.

#include <fmt/format.h>

#include "core/size.hpp"
#include "report/bench_reporters.hpp"
#include "report/progress.hpp"

namespace commscale {
namespace {

class ProgressBenchReporter final : public BenchReporter {
 public:
  ProgressBenchReporter(std::ostream* out, std::size_t rows) : progress_(out, "bench", rows) {}
  void begin(const BenchSetup& /*setup*/) override { progress_.update(0, "starting"); }
  void row(const BenchRow& row) override {
    progress_.update(++done_,
                     fmt::format("{} {} {} done", name(row.collective), name(row.type), format_size(row.size)));
  }
  void end(const BenchSummary& /*summary*/) override { progress_.finish(); }

 private:
  Progress progress_;
  std::size_t done_ = 0;
};

}  // namespace

std::unique_ptr<BenchReporter> make_progress_bench_reporter(std::ostream* out, std::size_t rows) {
  return std::make_unique<ProgressBenchReporter>(out, rows);
}

}  // namespace commscale

// JSON Lines for `commscale bench`: a header line (schema_version, context, config), a line per row as
// it is measured, and a summary line at the end. An interrupted sweep leaves every measured row.

#include <nlohmann/json.hpp>

#include "core/jsonl_file.hpp"
#include "report/bench_reporters.hpp"

namespace commscale {
namespace {

class JsonLinesBenchReporter final : public BenchReporter {
 public:
  explicit JsonLinesBenchReporter(std::string path) : file_(std::move(path)) {}

  void begin(const BenchSetup& setup) override {
    file_.append({{"record", "header"},
                  {"kind", "commscale-bench"},
                  {"schema_version", kBenchSchemaVersion},
                  {"context", setup.context},
                  {"config", setup}});
  }

  void row(const BenchRow& row) override {
    nlohmann::json line = row;
    line["record"] = "row";
    file_.append(line);
  }

  void end(const BenchSummary& s) override {
    file_.append({{"record", "summary"},
                  {"avg_busbw_GBps", s.avg_busbw_GBps},
                  {"wrong", s.wrong},
                  {"busbw_ok", s.busbw_ok},
                  {"passed", s.passed()}});
    file_.flush_to_disk();
  }

 private:
  JsonLinesFile file_;
};

}  // namespace

std::unique_ptr<BenchReporter> make_jsonl_bench_reporter(std::string path) {
  return std::make_unique<JsonLinesBenchReporter>(std::move(path));
}

}  // namespace commscale

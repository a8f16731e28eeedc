#pragma once

// What a collective sweep measured: plain records handed to the reporters (text, JSON, CSV). The
// measurement code never prints.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/options.hpp"
#include "core/stats.hpp"
#include "core/run_context.hpp"

namespace commscale {

// Times are combined across ranks by BenchOptions::combine. See src/bench/BUSBW.md for the method.
struct PlacementResult {
  double time_us = 0.0;  // the "time" column: a back-to-back loop timed as a whole, per iteration (nccl-tests' time)
  std::vector<double> samples_us;  // one per iteration, from a second loop with a mark between iterations
  Summary sample_stats;            // of samples_us
  GBps algbw;                      // from time_us
  GBps busbw;
  std::uint64_t wrong = 0;  // wrong elements over all ranks and check iterations
  bool checked = false;     // false with -c 0, and where the library does not define the in-place form
  std::vector<double> rank_time_us;  // each rank's own loop time per iteration, by world rank (rank 0 only)
};

// alltoallv's row: the busiest rank's bytes (algbw's numerator) and the receive side's skew.
struct RowTraffic {
  std::uint64_t max_send_bytes = 0;
  std::uint64_t max_recv_bytes = 0;
  double recv_max_over_mean = 1.0;
};

struct BenchRow {
  Collective collective = Collective::kAllReduce;
  DataType type = DataType::kFloat32;
  std::optional<ReduceOp> op;  // reductions only
  std::optional<int> root;     // broadcast and reduce only
  Bytes size;
  std::uint64_t count = 0;
  PlacementResult out_of_place;
  PlacementResult in_place;
  std::optional<RowTraffic> traffic;  // alltoallv only
};

// How the sweep ran, for the reporters' headers.
struct BenchSetup {
  RunContext context;
  BenchOptions options;
  int group_size = 1;  // ranks per concurrent group
  int groups = 1;
  std::vector<std::vector<int>> group_ranks;
  std::string timing;  // one sentence: how samples were taken
  std::optional<TrafficMatrix> traffic;  // alltoallv's, when the sweep has it
};

// One collective's rows, as the footer of one nccl-tests binary: nccl-tests runs one collective per
// program, so `bench all` gives each collective its own average (an average over collectives of
// different busbw factors means nothing).
struct CollectiveSummary {
  Collective collective = Collective::kAllReduce;
  double avg_busbw_GBps = 0.0;  // mean busbw over the collective's rows and placements
  std::uint64_t wrong = 0;
  bool busbw_ok = true;  // false when below --min-busbw
};

struct BenchSummary {
  double avg_busbw_GBps = 0.0;  // mean busbw over every row and placement (one collective: its footer's)
  std::uint64_t wrong = 0;
  bool busbw_ok = true;                        // false when any collective's average is below --min-busbw
  std::vector<CollectiveSummary> collectives;  // in the order they ran
  [[nodiscard]] bool passed() const noexcept { return wrong == 0 && busbw_ok; }
};

class BenchReporter {
 public:
  virtual ~BenchReporter() = default;
  virtual void begin(const BenchSetup& setup) = 0;
  virtual void row(const BenchRow& row) = 0;
  // After the last row of each collective, before the next collective's first row.
  virtual void collective_end(const CollectiveSummary& /*summary*/) {}
  virtual void end(const BenchSummary& summary) = 0;
};

// Forwards every call to each reporter in turn.
class BenchReporterList final : public BenchReporter {
 public:
  void add(std::unique_ptr<BenchReporter> reporter) { reporters_.push_back(std::move(reporter)); }
  void begin(const BenchSetup& setup) override {
    for (auto& r : reporters_) r->begin(setup);
  }
  void row(const BenchRow& row) override {
    for (auto& r : reporters_) r->row(row);
  }
  void collective_end(const CollectiveSummary& summary) override {
    for (auto& r : reporters_) r->collective_end(summary);
  }
  void end(const BenchSummary& summary) override {
    for (auto& r : reporters_) r->end(summary);
  }

 private:
  std::vector<std::unique_ptr<BenchReporter>> reporters_;
};

// Makes the reporter of one sweep (calibrate runs a sweep per group size and lets its caller choose
// how the rows are shown).
using BenchReporterFactory = std::function<std::unique_ptr<BenchReporter>()>;

}  // namespace commscale

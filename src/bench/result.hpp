#pragma once

// What a collective sweep measured: plain records handed to the reporters (text, JSON, CSV). The
// measurement code never prints.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/options.hpp"
#include "core/stats.hpp"
#include "report/context.hpp"

namespace commscale {

struct PlacementResult {
  std::vector<double> samples_us;  // one per timed iteration, combined across ranks by BenchOptions::combine
  Summary time_us;                 // of samples_us; time_us.mean is the "time" column, as in nccl-tests
  GBps algbw;                      // from the mean time
  GBps busbw;
  std::uint64_t wrong = 0;  // wrong elements over all ranks and check iterations
  bool checked = false;
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
};

// How the sweep ran, for the reporters' headers.
struct BenchSetup {
  RunContext context;
  BenchOptions options;
  int group_size = 1;  // ranks per concurrent group
  int groups = 1;
  std::vector<std::vector<int>> group_ranks;
  std::string timing;  // one sentence: how samples were taken
};

struct BenchSummary {
  double avg_busbw_GBps = 0.0;  // mean busbw over every row and placement, as nccl-tests' footer
  std::uint64_t wrong = 0;
  bool busbw_ok = true;  // false when below --min-busbw
  [[nodiscard]] bool passed() const noexcept { return wrong == 0 && busbw_ok; }
};

class BenchReporter {
 public:
  virtual ~BenchReporter() = default;
  virtual void begin(const BenchSetup& setup) = 0;
  virtual void row(const BenchRow& row) = 0;
  virtual void end(const BenchSummary& summary) = 0;
};

}  // namespace commscale

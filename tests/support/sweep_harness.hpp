#pragma once

// Runs a collective sweep in-process on whatever backend a test asks for and keeps the rows, so MPI
// and GPU tests can check results directly instead of parsing output.

#include <memory>
#include <vector>

#include "bench/sweep.hpp"
#include "runtime/session.hpp"

namespace commscale::testing {

class RowCollector final : public BenchReporter {
 public:
  void begin(const BenchSetup&) override {}
  void row(const BenchRow& row) override { rows.push_back(row); }
  void end(const BenchSummary&) override {}
  std::vector<BenchRow> rows;
};

struct SweepOutcome {
  BenchSummary summary;
  std::vector<BenchRow> rows;  // on world rank 0 only
  std::string backend;
};

inline SweepOutcome run_sweep(const BenchOptions& options, BackendChoice backend) {
  const MpiComm world = MpiComm::world();
  RuntimeOptions runtime;
  runtime.backend = backend;
  const RankSession session = start_rank_session(runtime, world);
  const std::unique_ptr<Communicator> all = session.backend->world();
  CollectiveSweep sweep(options, *session.backend, *all, world);
  RowCollector rows;
  SweepOutcome outcome;
  outcome.summary = sweep.run(world.rank() == 0 ? &rows : nullptr);
  outcome.rows = std::move(rows.rows);
  outcome.backend = session.backend->kind();
  return outcome;
}

// Every collective, type, operator and root at a few sizes, including ones that are not a multiple
// of 16 bytes or of the rank count.
inline BenchOptions exhaustive_options() {
  BenchOptions o;
  o.collectives.assign(all_collectives().begin(), all_collectives().end());
  o.types.assign(all_data_types().begin(), all_data_types().end());
  o.ops.assign(all_reduce_ops().begin(), all_reduce_ops().end());
  o.all_roots = true;
  o.sizes = {Bytes(0), Bytes(8), Bytes(1000), Bytes(64 * 1024 + 24)};
  o.iters = 3;
  o.warmup = 1;
  o.check_iters = 2;
  return o;
}

}  // namespace commscale::testing

#pragma once

// The collective sweep behind `commscale bench`, written once for both backends. For every
// collective, type, operator, root and size it warms up, times `iters` back-to-back iterations out of
// place and in place (one sample per iteration), and then runs checked iterations on fresh data,
// counting every wrong element. Timing and checking method: src/bench/BUSBW.md.

#include <memory>

#include "bench/options.hpp"
#include "bench/result.hpp"
#include "runtime/backend.hpp"
#include "runtime/mpi.hpp"

namespace commscale {

// The concurrent groups a --split asks for, as lists of world ranks. Throws InputError when the
// group size does not divide the number of ranks.
[[nodiscard]] std::vector<std::vector<int>> split_groups(const Split& split, int world_size);

class CollectiveSweep {
 public:
  // `world` is the control plane; the collectives run on a communicator of this rank's group, split
  // from `world_comm` (the backend's communicator over all ranks).
  CollectiveSweep(const BenchOptions& options, Backend& backend, Communicator& world_comm, const MpiComm& world);

  // alltoallv's traffic matrix (the file's, the generated one, or uniform).
  [[nodiscard]] const TrafficMatrix& traffic() const noexcept { return traffic_; }

  // How the groups and samples are set up, for the reporters.
  [[nodiscard]] BenchSetup setup(const RunContext& context) const;

  // The rows the sweep will measure (for progress).
  [[nodiscard]] std::size_t row_count() const;

  // Runs the sweep. Rank 0 passes its reporter; the others pass nullptr. Every rank gets the summary.
  BenchSummary run(BenchReporter* reporter);

 private:
  struct Case;
  struct Buffers;
  [[nodiscard]] std::vector<Case> cases() const;
  // This rank's layout of one case (alltoallv's from the traffic matrix).
  [[nodiscard]] Case make_case(Collective c, DataType type, ReduceOp op, int root, Bytes size) const;
  // alltoallv: each peer's segment is a (sender, receiver) pair's own pattern (pattern.hpp).
  void fill_segments(const Case& c, Buffer& buffer, std::uint64_t offset, int rep);
  [[nodiscard]] std::uint64_t count_wrong_segments(const Case& c, std::uint64_t offset, int rep);
  [[nodiscard]] BenchRow measure_row(const Case& c);
  [[nodiscard]] CollectiveSummary collective_summary(Collective c, double busbw_total, int placements,
                                                     std::uint64_t wrong);
  [[nodiscard]] PlacementResult measure(const Case& c, bool in_place);
  [[nodiscard]] std::vector<double> time_iterations(const Case& c, bool in_place);
  [[nodiscard]] std::vector<double> time_back_to_back(const Case& c, bool in_place, const std::string& what);
  [[nodiscard]] std::vector<double> time_one_by_one(const Case& c, bool in_place, const std::string& what);
  [[nodiscard]] std::vector<double> time_graph_replays(const Case& c, bool in_place, const std::string& what);
  [[nodiscard]] std::uint64_t count_wrong(const Case& c, bool in_place);
  [[nodiscard]] PatternSpec spec(const Case& c, int rep) const;
  // Poisons the receive buffer and writes this rank's input for check iteration `rep` (0 before timing).
  void fill_inputs(const Case& c, bool in_place, int rep);
  [[nodiscard]] CollectiveCall call(const Case& c, bool in_place, int iteration) const;
  // On rank 0: the combined times, and each rank's loop time appended to *loop_times.
  [[nodiscard]] std::vector<double> combine_across_ranks(const std::vector<double>& mine,
                                                         std::vector<double>* loop_times) const;
  // Every collective call of the sweep goes through here (--debug-skip-collective counts them).
  void start(const CollectiveCall& call);

  const BenchOptions& options_;
  Backend& backend_;
  const MpiComm& world_;
  std::vector<std::vector<int>> groups_;
  std::unique_ptr<Communicator> group_;
  TrafficMatrix traffic_;  // alltoallv's, for the group's size
  std::unique_ptr<Buffer> send_;
  std::unique_ptr<Buffer> recv_;
  std::uint64_t calls_ = 0;
};

}  // namespace commscale

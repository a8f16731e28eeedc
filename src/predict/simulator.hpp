#pragma once

// Event simulation of a step program (program/op.hpp) as the executor runs it: per rank, seven streams
// that each run their ops one at a time in program order; an op starts when its stream has finished
// the op before it and its `deps` have ended; a collective moves data once every member of its group
// has reached its k-th call on that group, and a send and its receive (the k-th on their channel) once
// both sides have reached them. Durations come from an OpCosts (the cost models, or a test's table).
//
// The timeline it produces follows the executor's schema and meaning (program/timeline.hpp,
// program/breakdown.hpp): an op's start is when its rank reached it (stream free, deps met), its end
// when it completed; for a communication op the time between is waiting plus moving data, and the
// breakdown takes the data start from the latest arrival of the matched calls, as it does for
// measured timelines. One step; all ranks start at 0.
//
// Symmetry: the ranks of one pipeline stage usually share their op list and run it identically. The
// simulator partitions the ranks into classes by colour refinement: ranks start alike when they share
// a program and a cost signature (OpCosts::signature: equal durations for every op), and stay alike
// while, for every group handle, the classes of their group members (in member order) are alike.
// The result is an equitable partition, so every rank of a class has the same event times, and only
// one rank per class (its stand-in) is simulated, against the stand-ins of its peers. With
// `reduce = false` every rank is simulated (tests compare the two).

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "program/breakdown.hpp"
#include "program/host_costs.hpp"
#include "predict/program_index.hpp"
#include "program/op.hpp"
#include "program/timeline.hpp"

namespace commscale::predict {

class OpCosts {
 public:
  OpCosts() = default;
  OpCosts(const OpCosts&) = delete;
  OpCosts& operator=(const OpCosts&) = delete;
  virtual ~OpCosts() = default;
  // How long `op` of `rank` takes once it runs (a communication op: once all participants arrived).
  [[nodiscard]] virtual Seconds duration(int rank, const Op& op) const = 0;
  // Equal for ranks whose ops all take equal times (given equal programs).
  [[nodiscard]] virtual std::uint64_t signature(int rank) const = 0;
  // Where the costs hold them so: the durations of every op of `rank`, by op id, equal to duration()'s,
  // for a simulation that then reads no Op to time one. Null: duration() is asked op by op.
  [[nodiscard]] virtual const double* seconds_by_op(int /*rank*/) const { return nullptr; }
};

// Durations held in a table, one list per symmetry class of a simulation (by index into its `simulated`),
// by op id: what a pass that re-times a simulation's ops (interference, the clock) simulates again.
class TabledCosts final : public OpCosts {
 public:
  TabledCosts(std::vector<int> stand_in, std::vector<std::vector<double>> seconds)
      : stand_in_(std::move(stand_in)), seconds_(std::move(seconds)) {}
  [[nodiscard]] Seconds duration(int rank, const Op& op) const override { return Seconds(of(rank)[op.id]); }
  [[nodiscard]] std::uint64_t signature(int rank) const override {
    return static_cast<std::uint64_t>(stand_in_[static_cast<std::size_t>(rank)]);
  }
  [[nodiscard]] const double* seconds_by_op(int rank) const override { return of(rank).data(); }

 private:
  [[nodiscard]] const std::vector<double>& of(int rank) const {
    return seconds_[static_cast<std::size_t>(stand_in_[static_cast<std::size_t>(rank)])];
  }
  std::vector<int> stand_in_;
  std::vector<std::vector<double>> seconds_;
};

// Storage for a caller that runs many simulations: each run reuses the previous one's (the channels'
// call lists, the per-op bookkeeping). Nothing kept in it changes a result.
class SimStorage {
 public:
  SimStorage();
  ~SimStorage();
  SimStorage(const SimStorage&) = delete;
  SimStorage& operator=(const SimStorage&) = delete;
  struct Impl;  // simulator.cpp
  [[nodiscard]] Impl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// A caller's record of how the engine ran one program set, for a caller that simulates the set many
// times under other durations (search: one coarse program, many plans, each simulated again for
// interference). The engine's order of work and which calls each call is matched with depend on the
// program and the host's synchronisation alone, never on durations: the first run records them, and a
// later run of the same set and host synchronisation replays them, the engine's arithmetic in the
// engine's order without its bookkeeping, to the same results bit for bit (sim_recording.hpp).
class SimRecording {
 public:
  SimRecording();
  ~SimRecording();
  SimRecording(const SimRecording&) = delete;
  SimRecording& operator=(const SimRecording&) = delete;
  struct Impl;  // sim_recording.hpp
  [[nodiscard]] Impl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct SimulationOptions {
  bool reduce = true;  // simulate one rank per symmetry class
  // The host that issues each rank's ops (program/host_costs.hpp): one thread per rank issues the ops
  // in program order, each at its issue cost after the one before, starting `step` after the step
  // starts; an op cannot start on the GPU before it has been issued, and with HostSync::kBeforeOptimizer
  // the first op of the step phase is issued only once every op before it has completed. Null or zero
  // costs: ops are issued at once (device time alone).
  const HostCosts* host = nullptr;
  // index_programs(set) (program_index.hpp), where the caller keeps them for many runs of one set;
  // null: the run builds its own.
  const std::vector<ProgramIndex>* indexes = nullptr;
  SimStorage* storage = nullptr;  // null: the run allocates its own
  // The recording of this set (SimRecording), as `indexes` are its index: recorded by a run, replayed
  // by the later ones whose classes and host synchronisation are the same. Null: the engine runs.
  SimRecording* recording = nullptr;
};

struct Simulation {
  std::vector<int> simulated;              // world ranks simulated, one per class, ascending
  std::vector<int> stand_in;               // world rank -> index into `simulated`
  std::vector<int> class_size;             // by index into `simulated`
  std::vector<std::vector<double>> start;  // [simulated index][op]: when the rank reached the op, s
  std::vector<std::vector<double>> end;    // [simulated index][op]: when it completed, s
  // [simulated index][op]: when a communication op began to move data (every participant there); the
  // start of a compute op.
  std::vector<std::vector<double>> data_start;
  // [simulated index][op]: when the host finished issuing the op; empty without host costs.
  std::vector<std::vector<double>> issued;
  // [simulated index][op]: how long the host held the op back: issued minus the time its stream and
  // deps let it start, 0 where it was issued in time; empty without host costs.
  std::vector<std::vector<double>> host_hold;
  // By simulated index: the time the compute stream of the rank stood idle, ready but for the host
  // (ops not yet issued): how much of the step the host, not the GPU, set.
  std::vector<double> host_wait;
  Seconds step_time;  // the latest end
};

// Throws RuntimeFailure when the program cannot run to the end (a deadlock the checker should have
// caught).
[[nodiscard]] Simulation simulate(const ProgramSet& set, const OpCosts& costs, const SimulationOptions& options = {});
// The same, into `into`, whose vectors keep their storage (a caller running many simulations reuses one).
void simulate(const ProgramSet& set, const OpCosts& costs, const SimulationOptions& options, Simulation& into);

// The symmetry classes (colour refinement above): a class id per world rank, dense from 0.
[[nodiscard]] std::vector<int> symmetry_classes(const ProgramSet& set, const OpCosts& costs);

// Where each op of each simulated rank spent its time (program/timeline.hpp): [simulated index][op].
using SimAttribution = std::vector<std::vector<EventAttribution>>;

// The timeline of every rank of the set (each rank takes its stand-in's times), engine "predictor";
// with `attribution` (of `sim`), each event carries its stand-in's attribution too.
[[nodiscard]] Timeline full_timeline(const ProgramSet& set, const Simulation& sim,
                                     const SimAttribution* attribution = nullptr);

// The simulated ranks as a program set of their own: rank i is simulated[i], its groups' members
// mapped to the stand-ins' indices, so that break_down_step matches calls as in the full set.
struct ReducedRun {
  ProgramSet set;
  Timeline timeline;
  std::vector<double> weights;  // class sizes
};
// With `attribution` (of `sim`), its timeline carries each simulated rank's attribution.
[[nodiscard]] ReducedRun reduced_run(const ProgramSet& set, const Simulation& sim,
                                     const SimAttribution* attribution = nullptr);

// break_down_step of the reduced run, its means weighted by class size: equal to the breakdown of
// the full timeline.
[[nodiscard]] StepBreakdown simulated_breakdown(const ProgramSet& set, const Simulation& sim);

}  // namespace commscale::predict

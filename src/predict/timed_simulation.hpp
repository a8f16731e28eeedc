#pragma once
// The simulator's passes in the one order every engine runs them (predict on the full step program,
// search and compare on the stage model's coarse one): simulate; the GEMMs' clock at the step's GEMM
// share (clock.hpp); interference between compute and the communication beside it (interference.hpp).

#include <memory>

#include "predict/clock.hpp"
#include "predict/interference.hpp"
#include "predict/simulator.hpp"

namespace commscale::predict {

struct TimedSimulation {
  std::unique_ptr<OpCosts> clocked;  // the durations at the settled clock; null where the clock changed nothing
  ClockResult clock;
  InterferenceResult interference;
  // The durations the passes after the clock start from (before interference lengthened any op).
  [[nodiscard]] const OpCosts& timed(const OpCosts& costs) const { return clocked ? *clocked : costs; }
};

// Simulates `set` under `costs` into `sim` (whose vectors keep their storage), then the clock and
// interference passes, each re-simulating at most `max_iterations` times; `shares` gives each op's GEMM
// share and communication load. `sim` ends as the last simulation.
TimedSimulation simulate_timed(const ProgramSet& set, const OpCosts& costs, const InterferenceCosts& shares,
                               const ClockModel& clock, const InterferenceModel& interference,
                               const SimulationOptions& options, Simulation& sim, int max_iterations = 4);

}  // namespace commscale::predict

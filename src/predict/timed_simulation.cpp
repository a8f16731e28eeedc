#include "predict/timed_simulation.hpp"

namespace commscale::predict {

TimedSimulation simulate_timed(const ProgramSet& set, const OpCosts& costs, const InterferenceCosts& shares,
                               const ClockModel& clock, const InterferenceModel& interference,
                               const SimulationOptions& options, Simulation& sim, int max_iterations) {
  simulate(set, costs, options, sim);
  TimedSimulation t;
  t.clocked = apply_clock(set, costs, shares, clock, options, sim, &t.clock, max_iterations);
  t.interference = apply_interference(set, t.timed(costs), shares, interference, options, sim, max_iterations);
  return t;
}

}  // namespace commscale::predict

// What a simulation is turned into: the full timeline, the reduced run, the weighted breakdown.

#include <algorithm>

#include "predict/simulator.hpp"

namespace commscale::predict {

Timeline full_timeline(const ProgramSet& set, const Simulation& sim, const SimAttribution* attribution) {
  Timeline t;
  t.engine = "predictor";
  t.world_size = set.world_size;
  t.steps = 1;
  std::size_t total = 0;
  for (int r = 0; r < set.world_size; ++r) total += ops_of(set, r).size();
  t.events.reserve(total);
  if (attribution != nullptr) t.attribution.reserve(total);
  for (int r = 0; r < set.world_size; ++r) {
    const auto i = static_cast<std::size_t>(sim.stand_in.at(static_cast<std::size_t>(r)));
    for (std::size_t op = 0; op < sim.start[i].size(); ++op) {
      t.events.push_back({r, 0, static_cast<OpId>(op), Seconds(sim.start[i][op]), Seconds(sim.end[i][op])});
      if (attribution != nullptr) t.attribution.push_back(attribution->at(i).at(op));
    }
  }
  return t;
}

ReducedRun reduced_run(const ProgramSet& set, const Simulation& sim, const SimAttribution* attribution) {
  ReducedRun run;
  const auto k = static_cast<int>(sim.simulated.size());
  run.set.world_size = k;
  // Only the programs the simulated ranks run, renumbered.
  std::vector<int> program_index(set.programs.size(), -1);
  for (int i = 0; i < k; ++i) {
    const RankProgram& original = set.ranks.at(static_cast<std::size_t>(sim.simulated[static_cast<std::size_t>(i)]));
    int& p = program_index.at(static_cast<std::size_t>(original.program));
    if (p < 0) {
      p = static_cast<int>(run.set.programs.size());
      run.set.programs.push_back(set.programs[static_cast<std::size_t>(original.program)]);
    }
    RankProgram rp{i, p, original.groups};
    for (Group& g : rp.groups) {
      for (int& m : g.members) m = sim.stand_in.at(static_cast<std::size_t>(m));
    }
    run.set.ranks.push_back(std::move(rp));
    run.weights.push_back(static_cast<double>(sim.class_size[static_cast<std::size_t>(i)]));
  }
  run.timeline.engine = "predictor";
  run.timeline.world_size = k;
  run.timeline.steps = 1;
  for (int i = 0; i < k; ++i) {
    const auto& start = sim.start[static_cast<std::size_t>(i)];
    const auto& end = sim.end[static_cast<std::size_t>(i)];
    for (std::size_t op = 0; op < start.size(); ++op) {
      run.timeline.events.push_back({i, 0, static_cast<OpId>(op), Seconds(start[op]), Seconds(end[op])});
      if (attribution != nullptr) {
        run.timeline.attribution.push_back(attribution->at(static_cast<std::size_t>(i)).at(op));
      }
    }
  }
  return run;
}

StepBreakdown simulated_breakdown(const ProgramSet& set, const Simulation& sim) {
  const ReducedRun run = reduced_run(set, sim);
  StepBreakdown b = break_down_step(run.set, run.timeline, 0);
  double total = 0.0;
  for (const double w : run.weights) total += w;
  // Means over every rank of the set: each simulated rank counts as many times as its class has ranks.
  b.compute = b.exposed_comm = Seconds(0.0);
  b.groups.clear();
  for (const RankBreakdown& rb : b.ranks) {
    const double w = run.weights[static_cast<std::size_t>(rb.rank)] / total;
    b.compute += rb.compute * w;
    b.exposed_comm += rb.exposed_comm * w;
    for (const auto& [group, t] : rb.groups) {
      b.groups[group].busy += t.busy * w;
      b.groups[group].exposed += t.exposed * w;
    }
  }
  b.bubble = b.step_time - b.compute - b.exposed_comm;
  for (RankBreakdown& rb : b.ranks) rb.rank = sim.simulated[static_cast<std::size_t>(rb.rank)];
  return b;
}

}  // namespace commscale::predict

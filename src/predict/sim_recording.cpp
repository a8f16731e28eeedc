// The replay of a recorded simulation (sim_recording.hpp): Engine's arithmetic (simulator.cpp) step by step.

#include "predict/sim_recording.hpp"

#include <algorithm>

namespace commscale::predict {
namespace {

// A simulated rank's times and host, as the replay writes them.
struct Rank {
  double* start = nullptr;
  double* end = nullptr;
  double* data_start = nullptr;
  const double* seconds = nullptr;  // OpCosts::seconds_by_op, or null: OpCosts::duration
  double* issued = nullptr;
  double* host_hold = nullptr;
  // The host, as Engine::issue moves it: the next op to issue, its clock, the next point it waits at.
  OpId next = 0;
  double clock = 0.0;
  std::size_t at = 0;
  double passed_end = 0.0;
};

}  // namespace

void replay(const SimRecording::Impl& r, const ProgramSet& set, const OpCosts& costs, const HostCosts* host,
            Simulation& sim) {
  using Kind = SimRecording::Impl::Kind;
  const std::size_t n = sim.simulated.size();
  std::vector<Rank> ranks(n);
  sim.host_wait.assign(host != nullptr ? n : 0, 0.0);
  sim.issued.resize(host != nullptr ? n : 0);
  sim.host_hold.resize(host != nullptr ? n : 0);
  for (std::size_t i = 0; i < n; ++i) {
    Rank& k = ranks[i];
    const std::size_t ops = r.issue[i].size();
    sim.start[i].resize(ops);  // the replay writes every op's times
    sim.end[i].resize(ops);
    sim.data_start[i].resize(ops);
    k.start = sim.start[i].data();
    k.end = sim.end[i].data();
    k.data_start = sim.data_start[i].data();
    k.seconds = costs.seconds_by_op(sim.simulated[i]);
    if (host != nullptr) {
      sim.issued[i].resize(ops);
      sim.host_hold[i].resize(ops);
      k.issued = sim.issued[i].data();
      k.host_hold = sim.host_hold[i].data();
      k.clock = host->step.value();
    }
  }
  const auto duration = [&](std::uint32_t i, OpId id) {
    if (ranks[i].seconds != nullptr) return ranks[i].seconds[id];
    return costs.duration(sim.simulated[i], ops_of(set, sim.simulated[i])[id]).value();
  };
  // Engine::issue: when the host of rank i finished issuing op `id`. Where the engine's host passed a
  // synchronisation point, every op of its segment had ended: the latest of their ends is that of the
  // whole segment.
  const auto issue = [&](std::uint32_t i, OpId id) {
    Rank& k = ranks[i];
    const std::vector<OpId>& points = r.sync_points[i];
    const double* cost = r.issue[i].data();
    while (k.next <= id) {
      if (k.at < points.size() && k.next == points[k.at]) {
        double last = 0.0;
        for (OpId op = k.at == 0 ? 0 : points[k.at - 1]; op < points[k.at]; ++op) last = std::max(last, k.end[op]);
        k.passed_end = std::max(k.passed_end, last);
        k.clock = std::max(k.clock, k.passed_end);
        ++k.at;
      }
      const OpId stop = k.at < points.size() ? std::min<OpId>(id + 1, points[k.at]) : id + 1;  // up to the next point
      for (; k.next < stop; ++k.next) {
        k.clock += cost[k.next];
        k.issued[k.next] = k.clock;
      }
    }
    return k.issued[id];
  };
  std::uint32_t j = 0;  // the next read
  for (const SimRecording::Impl::Step& step : r.steps) {
    Rank& k = ranks[step.sim];
    const OpId id = step.op;
    if (step.kind == Kind::kMatch) {
      double data_start = k.start[id];
      for (; j < step.reads_end; ++j) data_start = std::max(data_start, ranks[r.reads[j].sim].start[r.reads[j].op]);
      k.data_start[id] = data_start;
      k.end[id] = data_start + duration(step.sim, id);
      continue;
    }
    double ready = step.after_stream ? k.end[r.reads[j++].op] : 0.0;
    for (; j < step.reads_end; ++j) ready = std::max(ready, k.end[r.reads[j].op]);
    if (host != nullptr) {
      const double issued = issue(step.sim, id);
      if (issued > ready && step.compute) sim.host_wait[step.sim] += issued - ready;
      k.host_hold[id] = issued > ready ? issued - ready : 0.0;
      ready = std::max(ready, issued);
    }
    k.start[id] = ready;
    if (step.kind == Kind::kArrive) continue;
    k.data_start[id] = ready;
    k.end[id] = ready + duration(step.sim, id);
  }
}

}  // namespace commscale::predict

#pragma once

// Internal to the simulator: a recorded run (simulator.hpp, SimRecording) and its replay.
//
// The engine's control flow reads no time: whether a stream can go on depends on which ops have
// ended (not when), a call is matched with the k-th call of its channel, and the host stops at its
// synchronisation points until their segments have ended. So the order of its steps, and the times
// each step reads, are the program's and the host's synchronisation's, whatever the durations. A
// recording lists those steps as the engine took them; a replay does the engine's arithmetic on them
// in the same order, without the worklist, the channels or the NaN checks: its results equal the
// engine's to the bit.

#include <cstdint>
#include <vector>

#include "predict/program_index.hpp"
#include "predict/simulator.hpp"
#include "program/host_costs.hpp"

namespace commscale::predict {

struct SimRecording::Impl {
  enum class Kind : std::uint8_t {
    kRun,     // an op that runs on its own (compute, a host copy) started and ended
    kArrive,  // a communication op started: its rank reached it
    kMatch,   // a communication op began to move data (every call it is matched with had arrived) and ended
  };
  struct Step {
    std::uint32_t sim = 0;  // index into Simulation::simulated
    OpId op = 0;
    Kind kind = Kind::kRun;
    bool after_stream = false;    // a start whose first read is the end of the op before it on its stream
    bool compute = false;         // a compute op: its host hold is the GPU waiting for the host
    std::uint32_t reads_end = 0;  // its reads: reads[previous step's reads_end, reads_end)
  };
  // A start reads the ends of its stream predecessor and deps; a match the starts of the calls it is
  // matched with.
  struct Read {
    std::uint32_t sim = 0;
    OpId op = 0;
  };

  // What it was recorded for: a run replays it when these are equal.
  bool recorded = false;
  std::vector<int> simulated;
  std::vector<int> stand_in;
  bool host = false;
  HostCosts host_costs;  // its issue costs and synchronisation

  std::vector<Step> steps;
  std::vector<Read> reads;
  // By simulated index: each op's issue cost, and where the host waits (HostCursor).
  std::vector<std::vector<double>> issue;
  std::vector<std::vector<OpId>> sync_points;

  [[nodiscard]] bool serves(const Simulation& sim, const HostCosts* h) const noexcept {
    if (!recorded || sim.simulated != simulated || sim.stand_in != stand_in || (h != nullptr) != host) return false;
    const HostCosts& c = host_costs;
    return h == nullptr || (h->sync == c.sync && h->sync_after_p2p == c.sync_after_p2p && h->issue == c.issue &&
                            h->attention_given == c.attention_given && h->attention == c.attention);
  }
};

// The run of `recording` under `costs`, into `sim` (its simulated ranks set as the recording's).
void replay(const SimRecording::Impl& recording, const ProgramSet& set, const OpCosts& costs, const HostCosts* host,
            Simulation& sim);

}  // namespace commscale::predict

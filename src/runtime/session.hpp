#pragma once

// Everything a command that runs on all ranks needs, set up once: the node layout, the chosen
// backend (and why), the run context rank 0 reports. Collective over the world communicator.

#include <memory>
#include <string>
#include <vector>

#include "core/run_context.hpp"
#include "runtime/backend.hpp"
#include "runtime/mpi.hpp"

namespace commscale {

enum class BackendChoice { kAuto, kGpu, kCpu };

struct RuntimeOptions {
  BackendChoice backend = BackendChoice::kAuto;
  std::vector<int> devices;  // --devices: local rank i uses devices[i % size]; empty: local rank % visible
  std::string command_line;
  Seconds timeout{0.0};  // --timeout: also bounds the set-up of NCCL communicators (0: none)
  Seconds wait_report{60.0};  // --wait-report: a rank that waits this long says for what (0: never)
};

struct RankSession {
  NodeInfo node;
  std::unique_ptr<Backend> backend;
  RunContext context;  // complete on every rank
};

// Picks the backend on every rank (all ranks must agree), selects this rank's GPU, and gathers the
// run context. With --backend auto and no GPU visible, runs on the CPU backend and says why.
[[nodiscard]] RankSession start_rank_session(const RuntimeOptions& options, const MpiComm& world);

}  // namespace commscale

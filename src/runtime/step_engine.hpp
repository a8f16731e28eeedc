#pragma once

// Runs one rank's step program for real. The executor (executor.hpp) drives an engine step after
// step; the GPU engine (runtime/cuda/cuda_step_engine.cpp) issues every op on its CUDA stream with
// CUDA events for the cross-stream dependencies, cuBLASLt GEMMs, memory-bound kernels and NCCL; the
// CPU engine (host_step_engine.cpp) runs the same program with OpenBLAS, plain loops and MPI.
//
// Both honour the program's semantics (program/op.hpp): seven streams, each running its ops one at a
// time in program order; an op starts when its stream reaches it and its cross-stream `deps` are done.
// Offload's ops run for real in both: host copies (HostCopy) between the pool and a host pool
// (step_buffers.hpp), and the host optimizer (MemoryKernelKind::kHostOptimizer) as CPU AdamW (host_adam.hpp).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/fault_injection.hpp"
#include "core/units.hpp"
#include "program/host_costs.hpp"
#include "program/op.hpp"
#include "runtime/mpi.hpp"
#include "runtime/step_buffers.hpp"

namespace commscale {

enum class StepTiming {
  kPerOp,     // a start and an end mark around every op
  kStepOnly,  // marks only where the step starts and ends (and what dependencies need)
};

// One step on one rank. Times are seconds from the step's start on this rank, which every rank takes
// right after a barrier.
struct StepRun {
  Seconds step;                  // from the step's start to the end of its last op
  std::vector<double> start_s;   // by op id; per-op timing only
  std::vector<double> end_s;
};

struct StepEngineConfig {
  const ProgramSet* set = nullptr;
  int rank = 0;
  Bytes modelled;        // what the memory model says the rank holds: the pool is at least this
  Seconds timeout{0.0};  // bounds every wait of a step; 0 waits forever
  bool tf32 = false;     // fp32 GEMMs on TF32 tensor cores (GPU), as torch's allow_tf32
  std::optional<CollectiveSkip> skip;  // testing only
  // The host costs ops are issued at (runtime/host_pacer.hpp); zero costs: as fast as the executor can.
  HostCosts host;
};

class StepEngine {
 public:
  virtual ~StepEngine() = default;
  // Runs one step. Collective over the world: every rank runs its step at the same time.
  [[nodiscard]] virtual StepRun run_step(StepTiming timing) = 0;
  // One sentence on how ops are run and timed, for reports.
  [[nodiscard]] virtual std::string method() const = 0;
  // Where the ops' operands live (the pool was allocated when the engine was made).
  [[nodiscard]] virtual const StepBuffers& buffers() const noexcept = 0;
  // The median time of `g` run alone, back to back `repetitions` times on operands of the pool, with
  // the same library call and algorithm the step uses; empty where the engine cannot say (CPU).
  [[nodiscard]] virtual std::optional<Seconds> standalone_gemm(const Gemm& g, int repetitions) = 0;
};

// The host optimizer's ops of a program (MemoryKernelKind::kHostOptimizer), each updating its own range of
// one HostAdam's parameters, in program order; `width` is the device's bytes a gradient and a weight.
struct HostUpdate {
  OpId op = 0;
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  std::size_t width = 0;
  std::int64_t steps = 0;  // updates done, so the next is step steps + 1
};
[[nodiscard]] std::vector<HostUpdate> host_updates(const std::vector<Op>& ops);
// The parameters they update together.
[[nodiscard]] std::uint64_t host_parameters(const std::vector<HostUpdate>& updates) noexcept;

// Which ops some op on another stream waits for: those need a completion mark.
[[nodiscard]] std::vector<bool> cross_stream_dependencies(const std::vector<Op>& ops);

// Every directed point-to-point link of the program (group handle, sender, receiver; world ranks),
// sorted, once each: the GPU engine gives each its own two-rank communicator.
struct P2pLink {
  std::uint32_t group = 0;
  int from = 0;
  int to = 0;
  auto operator<=>(const P2pLink&) const = default;
};
[[nodiscard]] std::vector<P2pLink> p2p_links(const ProgramSet& set);
// The link a transfer of world rank `rank` goes over.
[[nodiscard]] P2pLink link_of(const RankProgram& rank, const PointToPoint& p2p);

// A transfer of the program for a timeout message: "recv of 64 KiB from rank 0 (stage 0) on group pp-fwd
// (ranks 0, 2), microbatch 3".
[[nodiscard]] std::string describe_transfer(const RankProgram& rank, const Op& op, const PointToPoint& p2p);

// The color of this rank's group `handle` for a communicator split: the group's lowest world rank,
// or -1 when the rank has no such group or runs no collective on it.
[[nodiscard]] int collective_group_color(const ProgramSet& set, int rank, std::uint32_t handle);

}  // namespace commscale

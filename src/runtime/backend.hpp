#pragma once

// The two backends behind one interface, so the benchmark (and later the executor) is written once:
//
//   GPU: device memory, CUDA streams and events, NCCL communicators, fill/check kernels.
//   CPU: host memory, MPI non-blocking collectives progressed on the host, the host clock.
//
// A Backend owns this rank's memory and makes Communicators; each Communicator runs its collectives
// in order on its own Queue.

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/collective.hpp"
#include "core/pattern.hpp"
#include "core/units.hpp"
#include "core/run_context.hpp"
#include "runtime/step_engine.hpp"

namespace commscale {

// Memory owned by a backend: device memory on the GPU backend, host memory on the CPU backend.
class Buffer {
 public:
  virtual ~Buffer() = default;
  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] Bytes size() const noexcept { return size_; }

 protected:
  Buffer(std::byte* data, Bytes size) : data_(data), size_(size) {}

 private:
  std::byte* data_;
  Bytes size_;
};

// A captured sequence of work that can be replayed (CUDA graphs).
class Graph {
 public:
  virtual ~Graph() = default;
  virtual void launch() = 0;  // enqueues one replay on the queue it was captured from
};

// An in-order queue of work: a CUDA stream, or the MPI requests a CPU communicator has started.
// Marks timestamp the moment all work enqueued before them has completed.
class Queue {
 public:
  virtual ~Queue() = default;
  // Bounds every wait of this queue (marks on the CPU backend wait too); zero waits forever.
  virtual void set_timeout(Seconds timeout) = 0;
  virtual void reserve_marks(int count) = 0;
  virtual void mark(int index) = 0;
  // Time from mark `from` to mark `to`; call after wait().
  [[nodiscard]] virtual Seconds elapsed(int from, int to) = 0;
  // Blocks until all enqueued work has completed; throws TimeoutError naming `what` when it does not
  // complete within the timeout.
  virtual void wait(const std::string& what) = 0;
  [[nodiscard]] virtual bool can_capture() const noexcept { return false; }
  virtual void begin_capture();
  [[nodiscard]] virtual std::unique_ptr<Graph> end_capture();
  // How marks are timed, for reports ("CUDA events on the collective's stream").
  [[nodiscard]] virtual std::string timing_method() const = 0;
};

// One collective call, as nccl-tests' runColl takes it: counts per CollectiveLayout::count.
struct CollectiveCall {
  Collective collective = Collective::kAllReduce;
  const std::byte* send = nullptr;
  std::byte* recv = nullptr;
  std::uint64_t count = 0;
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  // alltoallv only: elements to and from each peer, packed in peer order in the send and receive buffers
  // (count is then unused). The spans must outlive the call's start().
  std::span<const std::uint64_t> send_counts;
  std::span<const std::uint64_t> recv_counts;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  [[nodiscard]] virtual int rank() const noexcept = 0;
  [[nodiscard]] virtual int size() const noexcept = 0;
  [[nodiscard]] virtual Queue& queue() noexcept = 0;
  // Enqueues the collective on queue(); returns without waiting for it.
  virtual void start(const CollectiveCall& call) = 0;
  // Whether the in-place form has a defined result (NCCL leaves in-place all-to-all and send/receive
  // undefined: the data sent may already have been overwritten). Undefined forms are timed, not checked.
  [[nodiscard]] virtual bool in_place_defined(Collective c) const noexcept = 0;
  // The ranks with the same color form a new communicator, ordered by key. Collective.
  [[nodiscard]] virtual std::unique_ptr<Communicator> split(int color, int key) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string kind() const = 0;  // "gpu" or "cpu"
  [[nodiscard]] virtual std::unique_ptr<Buffer> allocate(Bytes size, const std::string& what) = 0;
  // Pattern data (core/pattern.hpp) in a buffer, at an element offset. These complete before returning.
  virtual void fill_pattern(Buffer& buffer, std::uint64_t offset, std::uint64_t count, const PatternSpec& spec) = 0;
  virtual void poison(Buffer& buffer, std::uint64_t offset_bytes, Bytes size) = 0;
  [[nodiscard]] virtual std::uint64_t count_wrong(const Buffer& buffer, std::uint64_t offset, std::uint64_t count,
                                                  const PatternSpec& spec) = 0;
  virtual void store_element(Buffer& buffer, std::uint64_t offset, DataType type, double value) = 0;
  // A communicator over all ranks of the job. Collective.
  [[nodiscard]] virtual std::unique_ptr<Communicator> world() = 0;
  // Fills this rank's entry and the library versions of the run context.
  virtual void describe(RankPlacement& placement, RunContext& context) const = 0;
  // An engine that runs this rank's step program (`train`). Collective: every rank makes one.
  [[nodiscard]] virtual std::unique_ptr<StepEngine> make_step_engine(const StepEngineConfig& config) = 0;
};

}  // namespace commscale

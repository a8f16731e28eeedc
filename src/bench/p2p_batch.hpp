#pragma once

// How `commscale p2p` times a batch of copies, as nvbandwidth does: a spin kernel holds the first
// stream while every copy of the batch is queued (on that stream and others, on any device), so the
// time between the two events around the batch is the GPUs' time, not the rate at which the host
// can queue work. CUDA builds only.

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "core/units.hpp"
#include "runtime/cuda/device_memory.hpp"
#include "runtime/cuda/handles.hpp"

namespace commscale {

// A stream and the device it belongs to.
struct QueueRef {
  int device = 0;
  cudaStream_t stream = nullptr;
};

// The pinned words the spin kernel polls: the host's release and the kernel's report of a timeout.
class SpinFlag {
 public:
  SpinFlag() : memory_(Bytes(2 * sizeof(int)), "spin kernel's flag") {}
  [[nodiscard]] volatile int* release() const noexcept { return reinterpret_cast<volatile int*>(memory_.data()); }
  [[nodiscard]] volatile int* timed_out() const noexcept { return release() + 1; }

 private:
  PinnedMemory memory_;
};

class BatchTimer {
 public:
  // queues[0] leads: the spin kernel and the timing events are on it; the others join it.
  BatchTimer(std::vector<QueueRef> queues, const SpinFlag& flag, Seconds spin_timeout);

  // Holds the queues, calls `enqueue` to queue the batch on them, releases the hold and waits.
  // Returns the time from the release to the end of the batch on every queue. Throws RuntimeFailure
  // when queuing outlasted the spin kernel's timeout (the time would include the host's queuing).
  [[nodiscard]] Seconds run(const std::function<void()>& enqueue);

 private:
  std::vector<QueueRef> queues_;
  const SpinFlag& flag_;
  Seconds spin_timeout_;
  std::vector<CudaEvent> marks_;  // start and stop, on the lead device
  std::vector<SyncEvent> done_;   // one per other queue, on its device
};

}  // namespace commscale

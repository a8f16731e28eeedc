#pragma once

// A CUDA stream as a Queue: marks are CUDA events recorded on the stream, waits poll the stream (and
// the NCCL communicator's asynchronous error) so a timeout can abort a collective that never ends.
//
// NCCL communicators are non-blocking (ncclConfig_t::blocking = 0): initialisation, splits and enqueues
// return at once, possibly with ncclInProgress, and NcclComm::wait_ready polls them. No rank ever sits
// inside NCCL waiting for a peer: every wait polls the timeout and the control plane (a lost rank), and
// ends with ncclCommAbort; `main` then ends the job with MPI_Abort.

#include <nccl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.hpp"
#include "runtime/control_plane.hpp"
#include "runtime/cuda/handles.hpp"

namespace commscale {

// An NCCL communicator handle: destroyed normally, or aborted once after an error or a timeout.
class NcclComm {
 public:
  explicit NcclComm(ncclComm_t comm) noexcept : comm_(comm) {}
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  [[nodiscard]] ncclComm_t get() const noexcept { return comm_; }
  [[nodiscard]] bool aborted() const noexcept { return aborted_; }
  void abort() noexcept;
  // Returns once the communicator's last call (its initialisation, a split, an enqueue) has finished.
  // Aborts the communicator and throws on an NCCL error, on a lost rank (RankLostError, from the
  // control plane) or when `timeout` (0: none) passes; `what` names the call in the message.
  // `what` names the call for an error message; it is only built when the call is not ready at once
  // (enqueueing is on the timed path of bench's loops).
  void wait_ready(Seconds timeout, const std::function<std::string()>& what);
  void wait_ready(Seconds timeout, const std::string& what) {
    wait_ready(timeout, [&what] { return what; });
  }

 private:
  ncclComm_t comm_;
  bool aborted_ = false;
};

// The configuration every communicator of commscale is made with: non-blocking.
[[nodiscard]] ncclConfig_t nonblocking_config() noexcept;

class CudaQueue final : public Queue {
 public:
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_.get(); }
  // The communicator whose asynchronous errors a wait checks, and which a timeout aborts.
  void watch(NcclComm* comm) noexcept { comm_ = comm; }
  // The collectives started on the communicator's group, and the number of the last one enqueued
  // here: a timeout asks the group's ranks how far they got (control_plane.hpp).
  void track(std::shared_ptr<const GroupCalls> calls) noexcept { calls_ = std::move(calls); }
  void started(std::uint64_t call) noexcept { last_call_ = call; }

  void set_timeout(Seconds timeout) override { timeout_ = timeout; }
  [[nodiscard]] Seconds timeout() const noexcept { return timeout_; }
  void reserve_marks(int count) override;
  void mark(int index) override;
  [[nodiscard]] Seconds elapsed(int from, int to) override;
  void wait(const std::string& what) override;
  [[nodiscard]] bool can_capture() const noexcept override { return true; }
  void begin_capture() override;
  [[nodiscard]] std::unique_ptr<Graph> end_capture() override;
  [[nodiscard]] std::string timing_method() const override;

 private:
  CudaStream stream_;
  std::vector<CudaEvent> events_;
  NcclComm* comm_ = nullptr;
  Seconds timeout_{0.0};
  std::shared_ptr<const GroupCalls> calls_;
  std::uint64_t last_call_ = 0;
};

}  // namespace commscale

#pragma once

// A CUDA stream as a Queue: marks are CUDA events recorded on the stream, waits poll the stream (and
// the NCCL communicator's asynchronous error) so a timeout can abort a collective that never ends.

#include <nccl.h>

#include <vector>

#include "runtime/backend.hpp"
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

 private:
  ncclComm_t comm_;
  bool aborted_ = false;
};

class CudaQueue final : public Queue {
 public:
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_.get(); }
  // The communicator whose asynchronous errors a wait checks, and which a timeout aborts.
  void watch(NcclComm* comm) noexcept { comm_ = comm; }

  void set_timeout(Seconds timeout) override { timeout_ = timeout; }
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
};

}  // namespace commscale

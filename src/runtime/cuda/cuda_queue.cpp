#include "runtime/cuda/cuda_queue.hpp"

#include <chrono>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "runtime/control_plane.hpp"

namespace commscale {

using Clock = std::chrono::steady_clock;

ncclConfig_t nonblocking_config() noexcept {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

NcclComm::~NcclComm() {
  // While an error unwinds the stack the peers may be gone, and destroying would wait for them.
  if (std::uncaught_exceptions() > 0) abort();
  if (aborted_) return;
  // Finalizing flushes what was issued; a peer that never completes it must not hang this rank.
  NCCL_CHECK_NOTHROW(ncclCommFinalize(comm_));
  const auto start = Clock::now();
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress && Clock::now() - start < std::chrono::seconds(30)) {
    if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) break;
    std::this_thread::yield();
  }
  if (state != ncclSuccess) {
    abort();
    return;
  }
  NCCL_CHECK_NOTHROW(ncclCommDestroy(comm_));
}

void NcclComm::wait_ready(Seconds timeout, const std::function<std::string()>& what) {
  const auto start = Clock::now();
  for (int polls = 0;; ++polls) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t rc = ncclCommGetAsyncError(comm_, &state);
    if (rc != ncclSuccess) state = rc;
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) {
      abort();
      throw_library_error("NCCL", what().c_str(), nccl_error_text(state), __FILE__, __LINE__);
    }
    poll_control_plane();  // a lost rank throws; unwinding aborts the communicator (destructor)
    if (timeout.value() > 0 && Clock::now() - start > std::chrono::duration<double>(timeout.value())) {
      abort();
      throw TimeoutError(fmt::format("{} did not complete within {} s on {} (the NCCL communicator was aborted)",
                                     what(), timeout.value(), process_identity()));
    }
    if (polls > 1000) std::this_thread::yield();
  }
}

void NcclComm::abort() noexcept {
  if (aborted_) return;
  aborted_ = true;
  NCCL_CHECK_NOTHROW(ncclCommAbort(comm_));
}

void CudaQueue::reserve_marks(int count) {
  while (events_.size() < static_cast<std::size_t>(count)) events_.emplace_back();
}

void CudaQueue::mark(int index) { CUDA_CHECK(cudaEventRecord(events_.at(static_cast<std::size_t>(index)).get(), stream())); }

Seconds CudaQueue::elapsed(int from, int to) {
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, events_.at(static_cast<std::size_t>(from)).get(),
                                  events_.at(static_cast<std::size_t>(to)).get()));
  return milliseconds(ms);
}

void CudaQueue::wait(const std::string& what) {
  const WaitingFor waiting(what);  // for other ranks that ask, and this rank's report of a long wait
  const auto start = Clock::now();
  for (int polls = 0;; ++polls) {
    const cudaError_t state = cudaStreamQuery(stream());
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) CUDA_CHECK(state);
    if (comm_ != nullptr && !comm_->aborted()) {
      ncclResult_t async = ncclSuccess;
      NCCL_CHECK(ncclCommGetAsyncError(comm_->get(), &async));
      if (async != ncclSuccess && async != ncclInProgress) {
        comm_->abort();
        throw_library_error("NCCL", what.c_str(), nccl_error_text(async), __FILE__, __LINE__);
      }
    }
    poll_control_plane();
    if (timeout_.value() > 0 && Clock::now() - start > std::chrono::duration<double>(timeout_.value())) {
      // Ask the group before aborting: the answers come over MPI, not NCCL.
      const std::string diagnosis = calls_ && last_call_ > 0 ? diagnose_group(*calls_, last_call_) : "";
      const std::string group =
          calls_ ? fmt::format(" on the group of ranks {} (call {} on it)", rank_list(calls_->members), last_call_) : "";
      if (comm_ != nullptr) comm_->abort();
      throw TimeoutError(fmt::format("{}{} did not complete within {} s on {} (the NCCL communicator was aborted){}{}",
                                     what, group, timeout_.value(), process_identity(), diagnosis.empty() ? "" : "; ",
                                     diagnosis));
    }
    if (polls > 1000) std::this_thread::yield();
  }
}

void CudaQueue::begin_capture() { CUDA_CHECK(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal)); }

std::unique_ptr<Graph> CudaQueue::end_capture() {
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamEndCapture(stream(), &graph));
  return std::make_unique<CudaGraph>(graph, stream());
}

std::string CudaQueue::timing_method() const {
  return "CUDA events recorded on the collective's stream between iterations";
}

}  // namespace commscale

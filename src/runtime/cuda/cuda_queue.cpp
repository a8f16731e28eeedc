#include "runtime/cuda/cuda_queue.hpp"

#include <chrono>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {

NcclComm::~NcclComm() {
  // While an error unwinds the stack the peers may be gone, and destroying would wait for them.
  if (std::uncaught_exceptions() > 0) abort();
  if (!aborted_) NCCL_CHECK_NOTHROW(ncclCommDestroy(comm_));
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
  using Clock = std::chrono::steady_clock;
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
    if (timeout_.value() > 0 && Clock::now() - start > std::chrono::duration<double>(timeout_.value())) {
      if (comm_ != nullptr) comm_->abort();
      throw TimeoutError(fmt::format("{} did not complete within {} s on {}", what, timeout_.value(),
                                     process_identity()));
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

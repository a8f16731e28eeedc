#if defined(COMMSCALE_HAVE_CUDA)

#include "bench/p2p_batch.hpp"

#include <atomic>

#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/p2p.cuh"

namespace commscale {
namespace {

// Releases the spin kernel however the batch ends, so an exception while queuing cannot leave a
// stream held until the timeout.
class Release {
 public:
  explicit Release(const SpinFlag& flag) : flag_(flag) {}
  ~Release() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *flag_.release() = 1;
  }
  Release(const Release&) = delete;
  Release& operator=(const Release&) = delete;

 private:
  const SpinFlag& flag_;
};

}  // namespace

BatchTimer::BatchTimer(std::vector<QueueRef> queues, const SpinFlag& flag, Seconds spin_timeout)
    : queues_(std::move(queues)), flag_(flag), spin_timeout_(spin_timeout) {
  if (queues_.empty()) throw RuntimeFailure("BatchTimer needs at least one queue");
  {
    const ScopedDevice on(queues_.front().device);
    marks_.emplace_back();
    marks_.emplace_back();
  }
  for (std::size_t q = 1; q < queues_.size(); ++q) {
    const ScopedDevice on(queues_[q].device);
    done_.emplace_back();
  }
}

Seconds BatchTimer::run(const std::function<void()>& enqueue) {
  const QueueRef& lead = queues_.front();
  *flag_.release() = 0;
  *flag_.timed_out() = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  {
    const ScopedDevice on(lead.device);
    const Release release(flag_);  // released on every path out of this block
    const auto timeout_ns = static_cast<std::uint64_t>(spin_timeout_.value() * 1e9);
    kernels::launch_spin(flag_.release(), flag_.timed_out(), timeout_ns, lead.stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(marks_[0].get(), lead.stream));
    for (std::size_t q = 1; q < queues_.size(); ++q)
      CUDA_CHECK(cudaStreamWaitEvent(queues_[q].stream, marks_[0].get(), 0));
    enqueue();
    for (std::size_t q = 1; q < queues_.size(); ++q) {
      const ScopedDevice other(queues_[q].device);
      CUDA_CHECK(cudaEventRecord(done_[q - 1].get(), queues_[q].stream));
      CUDA_CHECK(cudaStreamWaitEvent(lead.stream, done_[q - 1].get(), 0));
    }
    CUDA_CHECK(cudaEventRecord(marks_[1].get(), lead.stream));
  }
  CUDA_CHECK(cudaEventSynchronize(marks_[1].get()));
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (*flag_.timed_out() != 0) {
    throw RuntimeFailure(
        fmt::format("queuing a batch of copies took longer than the spin kernel's {} s timeout; "
                    "use fewer --copies per sample",
                    spin_timeout_.value()));
  }
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[0].get(), marks_[1].get()));
  return milliseconds(ms);
}

}  // namespace commscale

#endif

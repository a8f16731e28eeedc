#include "runtime/host_queue.hpp"

#include <thread>

#include <fmt/format.h>

#include "runtime/mpi.hpp"

namespace commscale {

void HostQueue::push(std::string what, std::vector<MPI_Request> requests, std::function<void()> then,
                     std::uint64_t call) {
  // The queue's memory is bounded, whatever the iteration count: ops complete in order anyway (as a
  // mark waits for them), so completing the ones queued so far before adding more changes no result.
  constexpr std::size_t kMaxPending = 1024;  // operations started and not yet completed
  if (pending_.size() >= kMaxPending) complete_all("a full queue");
  pending_.push_back(Pending{std::move(what), std::move(requests), std::move(then), call});
}

std::string HostQueue::timeout_message(std::size_t index, const std::string& context) const {
  const Pending& p = pending_[index];
  std::string text = fmt::format("{} did not complete within {} s on {} ({}; operation {} of the {} queued since "
                                 "the last wait)",
                                 p.what, timeout_.value(), process_identity(), context, index + 1, pending_.size());
  if (calls_ && p.call > 0) {
    const std::string diagnosis = diagnose_group(*calls_, p.call);
    if (!diagnosis.empty()) text += "; " + diagnosis;
  }
  return text;
}

void HostQueue::complete_all(const std::string& context) {
  const auto start = Clock::now();
  const auto limit = std::chrono::duration<double>(timeout_.value());
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    const WaitingFor waiting(p.what);
    for (int polls = 0;; ++polls) {
      int done = 0;
      MPI_CHECK(MPI_Testall(static_cast<int>(p.requests.size()), p.requests.data(), &done, MPI_STATUSES_IGNORE));
      if (done) break;
      poll_control_plane();
      if (timeout_.value() > 0 && Clock::now() - start > limit) throw TimeoutError(timeout_message(i, context));
      if (polls > 1000) std::this_thread::yield();  // long waits: let the MPI progress threads run
    }
    if (p.then) p.then();
  }
  pending_.clear();
}

void HostQueue::mark(int index) {
  complete_all("waiting for a timing mark");
  marks_.at(static_cast<std::size_t>(index)) = Clock::now();
}

Seconds HostQueue::elapsed(int from, int to) {
  const auto d = marks_.at(static_cast<std::size_t>(to)) - marks_.at(static_cast<std::size_t>(from));
  return Seconds(std::chrono::duration<double>(d).count());
}

void HostQueue::wait(const std::string& what) { complete_all(what); }

std::string HostQueue::timing_method() const {
  return "host steady clock around each MPI collective, which runs to completion before the next starts";
}

}  // namespace commscale

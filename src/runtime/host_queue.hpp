#pragma once

// The CPU backend's queue: MPI requests started in order and progressed on the host, each with an
// optional step to run once it completes (the division of an average, moving an in-place result).
// Marks wait for everything started before them and read the host's steady clock.

#include <mpi.h>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/backend.hpp"
#include "runtime/control_plane.hpp"

namespace commscale {

class HostQueue final : public Queue {
 public:
  using Clock = std::chrono::steady_clock;

  // Takes ownership of `requests` (may be empty for work already done) and runs `then` after they
  // complete. `what` names the operation in a timeout message; `call` is its number among the
  // collectives of the tracked group (0: not one of them).
  void push(std::string what, std::vector<MPI_Request> requests, std::function<void()> then = {},
            std::uint64_t call = 0);
  // The collectives started on this queue's group, for the diagnosis of a timeout.
  void track(std::shared_ptr<const GroupCalls> calls) { calls_ = std::move(calls); }

  void set_timeout(Seconds timeout) override { timeout_ = timeout; }
  void reserve_marks(int count) override { marks_.assign(static_cast<std::size_t>(count), Clock::time_point{}); }
  void mark(int index) override;
  [[nodiscard]] Seconds elapsed(int from, int to) override;
  void wait(const std::string& what) override;
  [[nodiscard]] std::string timing_method() const override;

 private:
  struct Pending {
    std::string what;
    std::vector<MPI_Request> requests;
    std::function<void()> then;
    std::uint64_t call = 0;
  };
  void complete_all(const std::string& context);
  [[nodiscard]] std::string timeout_message(std::size_t index, const std::string& context) const;

  std::vector<Pending> pending_;
  std::vector<Clock::time_point> marks_;
  Seconds timeout_{0.0};
  std::shared_ptr<const GroupCalls> calls_;
};

}  // namespace commscale

#pragma once

// `train --host-framework NAME`: the executor issues a step at a framework's host costs
// (program/host_costs.hpp), so that a step bound by its host is measured as the predictor simulates it.
//
// Before it issues an op, the issuing thread spins until the framework's cost for that op has passed
// since it began issuing the op before (or, for the first op, since the step's fixed host work of
// `step_us` ended, which itself starts when the step does). Where the executor's own work for an op
// (its launch, events, waits) takes longer, nothing is added: the host time per op is the larger of
// the executor's own and the framework's. With sync before_optimizer, the host waits for every op
// issued before the first op of the step phase to complete before issuing it, as Megatron-LM's
// gradient-norm readback does; the spin for that op starts when the wait returns.
//
// The host spins rather than sleeps: a sleep overshoots by tens of microseconds, the size of the
// costs being emulated. Pure C++ on an injectable clock, so that the arithmetic is tested alone.

#include <chrono>
#include <functional>

#include "core/units.hpp"
#include "program/host_costs.hpp"
#include "program/op.hpp"

namespace commscale {

class HostPacer {
 public:
  // Seconds on a monotonic clock.
  using Clock = std::function<double()>;

  explicit HostPacer(HostCosts costs, Clock now = steady_seconds) : costs_(std::move(costs)), now_(std::move(now)) {
    active_ = !costs_.zero() || costs_.sync != HostSync::kNone;
  }

  // Whether the pacer does anything (a framework other than device time alone).
  [[nodiscard]] bool active() const noexcept { return active_; }
  [[nodiscard]] const HostCosts& costs() const noexcept { return costs_; }

  // At the start of a step: spins for the step's fixed host work.
  void begin_step() {
    synced_ = false;
    if (!active_) return;
    mark_ = now_();
    spin_until(mark_ + costs_.step.value());
    mark_ = now_();
  }

  // Whether the host must wait for every op issued so far to complete before issuing `op` (the first
  // op of the step phase under sync before_optimizer); then call synced() once it has.
  [[nodiscard]] bool must_sync_before(const Op& op) const noexcept {
    return costs_.sync == HostSync::kBeforeOptimizer && !synced_ && op.phase == Phase::kStep;
  }
  void synced() {
    synced_ = true;
    mark_ = now_();
  }

  // Right before the executor issues `op`: spins until the framework's cost for it has passed since
  // the previous op began to be issued, and marks this op's start.
  void before_issue(const Op& op) {
    if (!active_) return;
    spin_until(mark_ + issue_cost(costs_, op).value());
    mark_ = now_();
  }

  // The moment the last op began to be issued (or the step's host work ended), on the clock.
  [[nodiscard]] double mark() const noexcept { return mark_; }

  static double steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

 private:
  void spin_until(double deadline) const {
    while (now_() < deadline) {
    }
  }

  HostCosts costs_;
  Clock now_;
  bool active_ = false;
  bool synced_ = false;
  double mark_ = 0.0;
};

}  // namespace commscale

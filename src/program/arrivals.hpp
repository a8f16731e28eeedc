#pragma once

// Matching communication calls across ranks in a timeline (breakdown.cpp, comm_rates.cpp): a
// collective moves data from the latest start among its group's members, a transfer from the later
// of its send and its receive.

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "program/op.hpp"
#include "program/timeline.hpp"

namespace commscale {

// One step's event of every (rank, op), indexed by base(rank) + op id; null where the timeline has none.
class StepEvents {
 public:
  StepEvents(const ProgramSet& set, const Timeline& timeline, int step);
  [[nodiscard]] const TimelineEvent* at(int rank, OpId op) const { return events_[base(rank) + op]; }
  [[nodiscard]] std::size_t base(int rank) const { return base_[static_cast<std::size_t>(rank)]; }
  [[nodiscard]] const std::vector<const TimelineEvent*>& events() const noexcept { return events_; }

 private:
  std::vector<std::size_t> base_;
  std::vector<const TimelineEvent*> events_;
};

// Where each communication op of the step starts moving data: the latest start of the calls it is
// matched with (a collective is the k-th call on its group instance, a transfer the k-th one from
// sender to receiver on its group).
class Arrivals {
 public:
  Arrivals(const ProgramSet& set, const StepEvents& events);
  // When `op` of `rank`, which started at `own_start`, began moving data.
  [[nodiscard]] double data_start(int rank, OpId op, double own_start) const;

 private:
  using Key = std::tuple<int, std::uint32_t, int, int, std::uint64_t>;
  void visit_rank(int r);

  const ProgramSet& set_;
  const StepEvents& events_;
  std::vector<Key> key_of_;  // indexed like StepEvents::events()
  std::map<Key, double> latest_;
};

}  // namespace commscale

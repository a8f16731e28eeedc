#pragma once

// Pipeline schedules: the order in which one stage runs the forward and backward passes of its
// microbatches (and, interleaved, of its model chunks).
//
//  - GPipe: all forwards, then all backwards, both in microbatch order.
//  - 1F1B (PipeDream-Flush, Megatron-LM's non-interleaved schedule): stage s runs min(p - s - 1, m)
//    warm-up forwards, then alternates one forward and one backward, then drains the backwards.
//  - Interleaved 1F1B (Narayanan et al. 2021; Megatron-LM's interleaved schedule): stage s holds v
//    chunks, chunk c being virtual stage c p + s. The k-th forward runs chunk (k / p) mod v of
//    microbatch (k / (p v)) p + k mod p; backwards visit chunks in reverse. Warm-up is
//    (p - s - 1) * 2 + (v - 1) * p forwards (all of them when m == p). Needs m to be a multiple of p.

#include <vector>

#include "parallel/plan.hpp"

namespace commscale {

struct ScheduleStep {
  bool forward = true;
  int microbatch = 0;
  int chunk = 0;
  friend bool operator==(const ScheduleStep&, const ScheduleStep&) = default;
};

[[nodiscard]] std::vector<ScheduleStep> stage_schedule(ScheduleKind kind, int pp, int stage, int microbatches,
                                                       int chunks);

// The most (microbatch, chunk) forwards whose backward has not run yet, over the schedule, each
// weighted by `chunk_cost[chunk]` (e.g. activation bytes of the chunk): the activation peak.
[[nodiscard]] double peak_in_flight(const std::vector<ScheduleStep>& steps, const std::vector<double>& chunk_cost);
// The same count at equal chunk costs of 1, without building the schedule (a search asks it for every stage
// of thousands of plans): the warm-up's forwards, and one more where a steady phase follows.
[[nodiscard]] int forwards_in_flight(ScheduleKind kind, int pp, int stage, int microbatches, int chunks);

}  // namespace commscale

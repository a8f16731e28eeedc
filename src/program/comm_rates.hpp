#pragma once

// The bandwidth each kind of communication call got inside the step: per group, call and size, the
// median time from the moment every rank it involves had reached it (the breakdown's data-moving
// time) to its end, over every rank, call and step of a timeline, with algbw and busbw by
// `bench`'s definitions (src/bench/BUSBW.md), so it reads against a `bench` row of the same size.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/units.hpp"
#include "program/op.hpp"
#include "program/timeline.hpp"

namespace commscale {

struct CommRate {
  std::string group;  // "tp", "dp", "pp-fwd", ...
  std::string call;   // "all_reduce", ..., or "send_recv" for a transfer
  Bytes size;         // nccl-tests' "size" (a transfer: the bytes sent)
  int ranks = 0;      // group size (2 for a transfer)
  int calls = 0;      // calls per step, summed over ranks (a transfer counts its send and its receive)
  Seconds median;     // data-moving time
  GBps algbw;
  GBps busbw;
};

// Sorted by group, call and size.
[[nodiscard]] std::vector<CommRate> comm_rates(const ProgramSet& set, const Timeline& timeline);

void to_json(nlohmann::json& out, const CommRate& rate);

}  // namespace commscale

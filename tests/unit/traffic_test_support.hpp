#pragma once

// A rank's traffic per group and kind ("dp all_reduce", "ep all_to_all"), for the tests that count a program's
// collectives by hand.

#include <map>
#include <string>

#include "parallel/plan_summary.hpp"

namespace commscale::testing {

inline std::map<std::string, GroupTraffic> traffic(const ProgramSet& set, int rank) {
  std::map<std::string, GroupTraffic> out;
  for (const GroupTraffic& t : stage_traffic(set, rank)) out[t.group + " " + t.kind] = t;
  return out;
}

}  // namespace commscale::testing

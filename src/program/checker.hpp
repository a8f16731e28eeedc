#pragma once

// Proves, before anything runs, that a program set runs to completion under the execution
// semantics of program/op.hpp, or says why not:
//
//  1. structure: ops[i].id == i; dependencies name earlier ops of the same rank (so program order is
//     a valid issue order for an executor); each op's stream fits its payload; group handles and
//     peers exist; collective sizes split into whole elements (and whole shards for gathers/scatters);
//  2. groups: a rank belongs to each of its groups, and every member of a group (name + members) has
//     that same group;
//  3. collectives: all members of a group issue, on each stream, the same sequence of collectives
//     (kind, bytes, dtype);
//  4. point-to-point: on every channel (group, from, to), the k-th send has a k-th receive of the
//     same size, and no receive is left without a send;
//  5. no deadlock: the graph of dependencies and stream order, with each collective instance and
//     each matched send/receive pair merged into one event, is acyclic. The check first runs on the
//     ranks' shared op lists (a quotient of the full graph: acyclic there implies acyclic for all
//     ranks) and, only if that finds a cycle, again rank by rank to confirm and name it.

#include <string>
#include <vector>

#include "program/op.hpp"

namespace commscale {

struct ProgramCheck {
  std::vector<std::string> problems;  // empty when the set is proven deadlock-free
  [[nodiscard]] bool ok() const noexcept { return problems.empty(); }
};

// Reports at most `max_problems` problems (the first found in the order above).
[[nodiscard]] ProgramCheck check_program(const ProgramSet& set, std::size_t max_problems = 20);

}  // namespace commscale

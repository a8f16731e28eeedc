#pragma once

// Internal to the checker: the communicators of a program set and, per shared op list, the
// sequences of collectives and point-to-point ops each group handle carries.

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "program/op.hpp"

namespace commscale::check {

struct Comm {
  GroupRole role = GroupRole::kTp;
  std::vector<int> members;
};

using CollectiveKey = std::pair<std::uint32_t, Stream>;       // handle, stream
using P2pKey = std::tuple<std::uint32_t, int, P2pDirection>;  // handle, peer, direction

struct Index {
  std::vector<Comm> comms;                                              // each distinct (name, members) once
  std::vector<std::vector<int>> rank_comms;                             // [rank][handle] -> comm id
  std::vector<std::map<CollectiveKey, std::vector<OpId>>> collectives;  // [program]
  std::vector<std::map<P2pKey, std::vector<OpId>>> p2p;                 // [program]
};

// Assumes the structure (handles, peers, ranks) has been checked.
[[nodiscard]] Index build_index(const ProgramSet& set);

[[nodiscard]] int handle_of(const Index& index, int rank, int comm);  // -1 when the rank lacks it
[[nodiscard]] int member_index(const Comm& comm, int rank);           // -1 when not a member

// "rank 3 op 17 'mb0.L1.fwd.qkv' (compute)"
[[nodiscard]] std::string describe(const ProgramSet& set, int rank, OpId op);
[[nodiscard]] std::string describe(const Comm& comm);  // "tp [0, 1, 2, 3]"

// Adds at most `room` problems: a dependency cycle through collectives and point-to-point pairs.
void check_cycles(const ProgramSet& set, const Index& index, std::vector<std::string>& problems, std::size_t room);

}  // namespace commscale::check

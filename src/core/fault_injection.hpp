#pragma once

// Faults the tests inject on purpose, so that what must happen when they happen for real is tested:
// a rank that skips a collective call (a hung collective) and, in bench, a wrong input element
// (BenchOptions::corrupt_rank). Set only by flags of the "Testing" group.

#include <cstdint>

namespace commscale {

// --debug-skip-collective RANK:INDEX: world rank `rank` issues no collective from its `index`-th call
// on (counted from 0 over the whole run), as a rank stuck there would, so the other ranks of that
// group wait for it; --timeout must catch that and name the rank. (It stops issuing rather than
// skipping one call: MPI and NCCL match collectives by order, and the calls after a single skipped one
// would meet calls of another size.)
struct CollectiveSkip {
  int rank = 0;
  std::uint64_t index = 0;
};

}  // namespace commscale

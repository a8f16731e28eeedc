#pragma once

// Faults the tests inject on purpose, so that what must happen when they happen for real is tested:
// a rank that skips a collective call (a hung collective), a rank that falls behind (doctor) and, in
// bench, a wrong input element (BenchOptions::corrupt_rank). Set only by flags of the "Testing" group.

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

// --inject-slow-rank RANK:MICROSECONDS (doctor): world rank `rank` waits this long before each
// collective call it issues, as a rank on a slow link or a busy host would fall behind, so that every
// group it is in runs slower and doctor must name it.
struct RankDelay {
  int rank = 0;
  double delay_us = 0.0;
};

}  // namespace commscale

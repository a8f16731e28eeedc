#pragma once

// How `commscale doctor` finds a slow node, NIC or link among N with log N rounds of disjoint pairs,
// and how it blames one from what the rounds measured. Pure, so the schedule and the blame are tested
// by hand without MPI.
//
// Rounds. Units (nodes, or ranks when the job has one node) are numbered 0 .. N-1. Round k of
// ceil(log2 N) pairs unit i with unit i XOR 2^k (when that is below N): round 0 pairs neighbours, the
// last round pairs the two halves of the job across its bisection. Every pair runs at once, once in
// each direction (the lower unit sending, then the higher), so each unit sends to and receives from
// one new partner per round: after the rounds it has met ceil(log2 N) partners (fewer for some units
// when N is not a power of two), and the job has taken 2 ceil(log2 N) timed phases, whatever N.
//
// Blame. A transfer is slow when its bandwidth is below min_ratio x its expectation (the link graph's
// figure when there is one, else the peer reference: the 75th percentile of every transfer of the job
// by nearest rank, a healthy transfer's rate as long as more than a quarter of them are healthy; one
// slow unit among N takes part in 2/N of them, half with 4 units). A unit whose sends are slow with
// at least two partners (more than half of them, and at least two) is blamed for its send path;
// likewise its receive path. A slow transfer that neither of its ends explains is blamed on the path
// between them (a cable, a switch port); when an end met no other partner that way, nothing vouches
// for it and the pair is named as either that end or the path.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace commscale::predict {

// ceil(log2 units); 0 for fewer than 2 units.
[[nodiscard]] int pair_round_count(int units);

// The pairs (lower, higher) of round `round` (0 .. pair_round_count - 1), in increasing order.
[[nodiscard]] std::vector<std::pair<int, int>> pair_round(int units, int round);

// One timed transfer between two units.
struct PairSample {
  int src = 0;
  int dst = 0;
  int round = 0;
  double bw_GBps = 0.0;
  std::optional<double> expected_GBps;  // absolute expectation, when there is one
};

enum class BlameSide : std::uint8_t { kSend, kReceive, kBoth, kPath };

struct UnitBlame {
  BlameSide side = BlameSide::kSend;
  int unit = 0;               // for kPath: the sender
  int partner = -1;           // for kPath: the receiver
  int slow = 0;               // slow transfers behind the blame
  int of = 0;                 // transfers of that side (the pair's one for kPath)
  double median_ratio = 0.0;  // of the slow transfers' bandwidth over their expectation
  // kPath: the sender sent to no other partner, or the receiver received from no other, so nothing
  // vouches for that end: it, or the path, is at fault (two units; some units when N is not a power
  // of two, e.g. unit 4 of 5 meets only unit 0).
  bool sender_alone = false;
  bool receiver_alone = false;
  [[nodiscard]] bool ambiguous() const noexcept { return sender_alone || receiver_alone; }
};

struct PairJudgement {
  std::optional<double> peer_reference_GBps;  // 75th percentile of all transfers (4 or more)
  std::vector<double> expected_GBps;          // per sample, as judged (0: none, not judged)
  std::vector<bool> slow;                     // per sample
  std::vector<UnitBlame> blame;
};

// Judges every sample against its absolute expectation, else the peer reference, and blames units
// and paths as the header says. `units` is N.
[[nodiscard]] PairJudgement judge_pairs(const std::vector<PairSample>& samples, int units, double min_ratio);

}  // namespace commscale::predict

#pragma once

// What `commscale bench` was asked to do. Plain data, filled by the command line and passed down as
// `const BenchOptions&`.

#include <optional>
#include <string>
#include <vector>

#include "core/collective.hpp"
#include "core/dtype.hpp"
#include "core/fault_injection.hpp"
#include "core/units.hpp"

namespace commscale {

// How per-iteration times of the ranks are combined into one sample (nccl-tests' -a).
enum class RankCombine : int { kRank0 = 0, kMean = 1, kMin = 2, kMax = 3 };

// How iterations are issued (nccl-tests' -z): back to back, or each completed before the next.
enum class Blocking : int { kNone = 0, kWaitAndBarrier = 1, kWait = 2 };

// Disjoint groups that run the collective concurrently. Consecutive groups put neighbouring ranks
// together (tensor-parallel-like, {0,1},{2,3}); strided groups take every k-th rank
// (data-parallel-like, {0,2},{1,3}).
enum class SplitKind { kNone, kConsecutive, kStrided };
struct Split {
  SplitKind kind = SplitKind::kNone;
  int group_size = 0;
};

struct BenchOptions {
  std::vector<Collective> collectives;
  std::vector<DataType> types = {DataType::kFloat32};
  std::vector<ReduceOp> ops = {ReduceOp::kSum};
  std::vector<int> roots = {0};
  bool all_roots = false;  // -r all: every rank of the group in turn
  std::vector<Bytes> sizes;
  int iters = 20;
  int warmup = 5;
  int check_iters = 1;  // checked runs after the timed ones; 0 disables checking
  Blocking blocking = Blocking::kNone;
  int graph_launches = 0;  // -G: capture the iterations in a CUDA graph and replay it this many times
  RankCombine combine = RankCombine::kMean;
  Split split;
  std::optional<double> min_busbw_GBps;
  Seconds timeout{0.0};  // 0: wait forever
  std::string json_path;
  std::string jsonl_path;  // JSON Lines, a line per row as it is measured
  std::string csv_path;
  std::optional<int> corrupt_rank;  // test-only: seed a wrong input element on this rank
  std::optional<CollectiveSkip> skip;  // test-only: a rank that skips one collective call
  std::optional<RankDelay> delay;      // test-only: a rank that waits before each collective call
  // Concurrent groups given rank by rank (doctor's pair rounds), instead of `split`: every rank in
  // exactly one group; the first rank of a group is its rank 0.
  std::vector<std::vector<int>> groups;
};

}  // namespace commscale

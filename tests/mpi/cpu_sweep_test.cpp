// The CPU backend's collectives under real mpirun (ctest runs this binary with 1, 2, 3 and 4 ranks).
#include <gtest/gtest.h>

#include "../support/sweep_harness.hpp"

namespace commscale {
namespace {

using testing::exhaustive_options;
using testing::run_sweep;

int world_size() { return MpiComm::world().size(); }
bool rank_zero() { return MpiComm::world().rank() == 0; }

TEST(CpuSweep, EveryCollectiveTypeOperatorAndRootIsCorrectInAndOutOfPlace) {
  const BenchOptions options = exhaustive_options();
  const auto outcome = run_sweep(options, BackendChoice::kCpu);
  EXPECT_EQ(outcome.backend, "cpu");
  EXPECT_EQ(outcome.summary.wrong, 0u);
  if (!rank_zero()) return;
  // Rows: 3 reductions x 6 types x 5 ops, with reduce once per root; 4 data movers x 6 types, with
  // broadcast once per root; each at 4 sizes.
  const std::size_t n = static_cast<std::size_t>(world_size());
  const std::size_t expected_rows = (6 * 5 * (2 + n) + 6 * (3 + n)) * options.sizes.size();
  ASSERT_EQ(outcome.rows.size(), expected_rows);
  for (const BenchRow& row : outcome.rows) {
    for (const PlacementResult* p : {&row.out_of_place, &row.in_place}) {
      EXPECT_TRUE(p->checked);
      EXPECT_EQ(p->wrong, 0u) << name(row.collective) << " " << name(row.type) << " size " << row.size.count();
      EXPECT_EQ(p->samples_us.size(), 3u);
      EXPECT_GT(p->time_us, 0.0);
      EXPECT_GE(p->sample_stats.min, 0.0);
    }
  }
}

TEST(CpuSweep, SeededCorruptionIsCaughtInEveryRow) {
  BenchOptions options = exhaustive_options();
  options.types = {DataType::kBFloat16, DataType::kInt32};
  options.sizes = {Bytes(4096)};
  options.corrupt_rank = 0;
  const auto outcome = run_sweep(options, BackendChoice::kCpu);
  EXPECT_GT(outcome.summary.wrong, 0u);
  EXPECT_FALSE(outcome.summary.passed());
  for (const BenchRow& row : outcome.rows) {
    // A broadcast from a root other than rank 0 never reads rank 0's input.
    if (row.collective == Collective::kBroadcast && row.root != 0) continue;
    EXPECT_GT(row.out_of_place.wrong, 0u) << name(row.collective) << " " << name(row.type);
    EXPECT_GT(row.in_place.wrong, 0u) << name(row.collective) << " " << name(row.type);
  }
}

TEST(CpuSweep, ConcurrentSplitGroups) {
  if (world_size() % 2 != 0) GTEST_SKIP() << "needs an even number of ranks";
  for (SplitKind kind : {SplitKind::kConsecutive, SplitKind::kStrided}) {
    BenchOptions options = exhaustive_options();
    options.types = {DataType::kFloat32};
    options.ops = {ReduceOp::kSum};
    options.split = {kind, 2};
    const auto outcome = run_sweep(options, BackendChoice::kCpu);
    EXPECT_EQ(outcome.summary.wrong, 0u);
  }
}

TEST(CpuSweep, BlockingModesAndRankCombination) {
  for (Blocking blocking : {Blocking::kWaitAndBarrier, Blocking::kWait}) {
    for (RankCombine combine : {RankCombine::kRank0, RankCombine::kMin, RankCombine::kMax}) {
      BenchOptions options;
      options.collectives = {Collective::kAllReduce, Collective::kSendRecv};
      options.sizes = {Bytes(4096)};
      options.iters = 5;
      options.blocking = blocking;
      options.combine = combine;
      const auto outcome = run_sweep(options, BackendChoice::kCpu);
      EXPECT_EQ(outcome.summary.wrong, 0u);
      for (const BenchRow& row : outcome.rows) EXPECT_EQ(row.out_of_place.samples_us.size(), 5u);
    }
  }
}

TEST(CpuSweep, MinBusbwFailsTheRun) {
  BenchOptions options;
  options.collectives = {Collective::kAllReduce};
  options.sizes = {Bytes(1024)};
  options.min_busbw_GBps = 1e9;
  const auto outcome = run_sweep(options, BackendChoice::kCpu);
  EXPECT_EQ(outcome.summary.wrong, 0u);
  EXPECT_FALSE(outcome.summary.busbw_ok);
  EXPECT_FALSE(outcome.summary.passed());
}

TEST(MpiNode, LocalRanksFormAPermutation) {
  const MpiComm world = MpiComm::world();
  const NodeInfo node = discover_node(world);
  EXPECT_GE(node.local_rank, 0);
  EXPECT_LT(node.local_rank, node.local_size);
  EXPECT_EQ(node.node_count, 1);  // every rank of this test runs on one machine
  EXPECT_EQ(node.local_size, world.size());
  EXPECT_FALSE(node.local_rank_source.empty());
}

}  // namespace
}  // namespace commscale

#include "core/collective.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace commscale {
namespace {

TEST(Collective, NamesAndNcclTestsSpellings) {
  for (Collective c : all_collectives()) EXPECT_EQ(parse_collective(name(c), "collective"), c);
  EXPECT_EQ(parse_collective("allreduce", "c"), Collective::kAllReduce);
  EXPECT_EQ(parse_collective("all_reduce_perf", "c"), Collective::kAllReduce);
  EXPECT_EQ(parse_collective("alltoall_perf", "c"), Collective::kAllToAll);
  EXPECT_EQ(parse_collective("reduce-scatter", "c"), Collective::kReduceScatter);
  EXPECT_THROW((void)parse_collective("gather", "c"), InputError);
  // alltoallv has a name and nccl-tests' spelling, and stays out of `all` (nccl-tests builds it apart).
  EXPECT_EQ(parse_collective("alltoallv_perf", "c"), Collective::kAllToAllV);
  EXPECT_EQ(name(Collective::kAllToAllV), "alltoallv");
  for (Collective c : all_collectives()) EXPECT_NE(c, Collective::kAllToAllV);
  EXPECT_EQ(all_collectives().size(), 7u);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllToAllV, 4), 0.75);
}

// The factors of src/bench/BUSBW.md, evaluated by hand for n = 2, 4 and 8.
TEST(Collective, BusBandwidthFactorsByHand) {
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 2), 1.0);    // 2(2-1)/2
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 8), 1.75);   // 2*7/8
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllGather, 4), 0.75);   // 3/4
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kSendRecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 1), 0.0);    // one rank moves nothing
}

// The cost model's ring figures, by hand: an all-reduce on 4 ranks runs 2 rounds of 3 steps and gives
// busbw * 4 / (2 * 3) of algorithm bandwidth; an all-gather on 4, 1 round, busbw * 4 / 3; a broadcast
// runs at busbw (BUSBW.md).
TEST(Collective, TraitsForTheCostModelAndLaunchers) {
  EXPECT_EQ(traits(Collective::kAllReduce).ring_rounds, 2);
  EXPECT_EQ(traits(Collective::kAllGather).ring_rounds, 1);
  EXPECT_DOUBLE_EQ(algbw_per_busbw(Collective::kAllReduce, 4), 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(algbw_per_busbw(Collective::kAllGather, 4), 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(algbw_per_busbw(Collective::kBroadcast, 4), 1.0);
  for (Collective c : all_collectives()) {
    EXPECT_EQ(name(c), traits(c).name);
    EXPECT_DOUBLE_EQ(busbw_factor(c, 8) * algbw_per_busbw(c, 8), 1.0) << name(c);
    // A chunked call's count is per rank: its layout's algbw counts the group's chunks.
    const CollectiveLayout l = collective_layout(c, Bytes(4096), DataType::kInt8, 4, 0);
    EXPECT_EQ(l.algbw_bytes.count(), l.count * (per_rank_chunks(traits(c).shape) ? 4u : 1u)) << name(c);
  }
  EXPECT_FALSE(traits(Collective::kAllToAll).nccl_in_place);  // NCCL leaves these undefined
  EXPECT_FALSE(traits(Collective::kSendRecv).nccl_in_place);
  EXPECT_TRUE(traits(Collective::kReduceScatter).nccl_in_place);
}

TEST(Collective, AllReduceLayout) {
  // 1 MiB of fp32 = 262144 elements in both buffers; algbw counts the whole buffer.
  const CollectiveLayout l = collective_layout(Collective::kAllReduce, Bytes(kMiB), DataType::kFloat32, 4, 1);
  EXPECT_EQ(l.count, 262144u);
  EXPECT_EQ(l.send_count, 262144u);
  EXPECT_EQ(l.recv_count, 262144u);
  EXPECT_EQ(l.size.count(), kMiB);
  EXPECT_EQ(l.algbw_bytes.count(), kMiB);
  EXPECT_EQ(l.send_inplace_offset, 0u);
  // 1 MiB in 100 us: algbw = 1048576 / 1e9 / 1e-4 = 10.48576 GB/s; busbw = * 2*3/4.
  const Bandwidths bw = collective_bandwidths(l, microseconds(100));
  EXPECT_DOUBLE_EQ(bw.algbw.value(), 10.48576);
  EXPECT_DOUBLE_EQ(bw.busbw.value(), 10.48576 * 1.5);
}

TEST(Collective, AllGatherLayoutRoundsChunkTo16Bytes) {
  // 1000 B of fp32 on 3 ranks: 250 elements, 83 per rank, rounded down to a multiple of 4 elements
  // (16 bytes) = 80. Receive holds 240 elements = 960 B; algbw counts 80 * 4 B * 3 ranks = 960 B.
  const CollectiveLayout l = collective_layout(Collective::kAllGather, Bytes(1000), DataType::kFloat32, 3, 2);
  EXPECT_EQ(l.count, 80u);
  EXPECT_EQ(l.send_count, 80u);
  EXPECT_EQ(l.recv_count, 240u);
  EXPECT_EQ(l.size.count(), 960u);
  EXPECT_EQ(l.algbw_bytes.count(), 960u);
  EXPECT_EQ(l.send_inplace_offset, 160u);  // rank 2's chunk
  EXPECT_DOUBLE_EQ(l.busbw_factor, 2.0 / 3.0);
}

TEST(Collective, ReduceScatterAndAllToAllLayouts) {
  // 64 B of int8 on 2 ranks: 32 per rank (already a multiple of 16).
  const CollectiveLayout rs = collective_layout(Collective::kReduceScatter, Bytes(64), DataType::kInt8, 2, 1);
  EXPECT_EQ(rs.count, 32u);
  EXPECT_EQ(rs.send_count, 64u);
  EXPECT_EQ(rs.recv_count, 32u);
  EXPECT_EQ(rs.recv_inplace_offset, 32u);
  const CollectiveLayout a2a = collective_layout(Collective::kAllToAll, Bytes(64), DataType::kInt8, 2, 1);
  EXPECT_EQ(a2a.count, 32u);
  EXPECT_EQ(a2a.send_count, 64u);
  EXPECT_EQ(a2a.recv_count, 64u);
  EXPECT_EQ(a2a.algbw_bytes.count(), 64u);
  // 8 B of fp32 on 8 ranks: 2 elements, 0 per rank; nccl-tests reports size 0 and count 0 too.
  const CollectiveLayout tiny = collective_layout(Collective::kAllGather, Bytes(8), DataType::kFloat32, 8, 0);
  EXPECT_EQ(tiny.count, 0u);
  EXPECT_EQ(tiny.size.count(), 0u);
  EXPECT_EQ(collective_bandwidths(tiny, microseconds(10)).busbw.value(), 0.0);
}

TEST(Collective, RootedAndPointToPointLayouts) {
  for (Collective c : {Collective::kBroadcast, Collective::kReduce, Collective::kSendRecv}) {
    const CollectiveLayout l = collective_layout(c, Bytes(4096), DataType::kBFloat16, 4, 3);
    EXPECT_EQ(l.count, 2048u);
    EXPECT_EQ(l.algbw_bytes.count(), 4096u);
    EXPECT_DOUBLE_EQ(l.busbw_factor, 1.0);
  }
  EXPECT_TRUE(takes_root(Collective::kReduce));
  EXPECT_FALSE(takes_root(Collective::kAllReduce));
  EXPECT_TRUE(takes_reduce_op(Collective::kReduceScatter));
  EXPECT_FALSE(takes_reduce_op(Collective::kSendRecv));
}

}  // namespace
}  // namespace commscale

// The simulator's host (program/host_costs.hpp) and compute–communication interference
// (predict/interference.hpp) on hand-built programs whose times can be worked out by hand.
#include <gtest/gtest.h>

#include "predict/interference.hpp"
#include "predict/simulator.hpp"
#include "predict_test_support.hpp"

namespace commscale::predict {
namespace {

using testing::op;
using testing::TableCosts;

// One rank, three GEMMs of 1 s each on the compute stream, one after another.
ProgramSet three_gemms() {
  ProgramSet set;
  set.world_size = 1;
  const Gemm g = make_gemm(64, 64, 64, 1, DataType::kBFloat16);
  set.programs.push_back(
      {op(0, Stream::kCompute, {}, "a", g), op(1, Stream::kCompute, {}, "b", g), op(2, Stream::kCompute, {}, "c", g)});
  set.ranks.push_back(RankProgram{0, 0, {}});
  return set;
}

HostCosts per_op(double gemm_s, double step_s = 0.0) {
  HostCosts h;
  h.framework = "test";
  for (auto& phase : h.issue) phase[static_cast<std::size_t>(HostOpClass::kGemm)] = Seconds(gemm_s);
  h.step = Seconds(step_s);
  return h;
}

TEST(SimulatorHost, AHostSlowerThanTheGpuSetsThePace) {
  const ProgramSet set = three_gemms();
  const TableCosts costs({{"a", 1}, {"b", 1}, {"c", 1}});
  const HostCosts host = per_op(2.0);
  const Simulation sim = simulate(set, costs, {.host = &host});
  // Issued at 2, 4, 6; each runs 1 s from its issue: 2..3, 4..5, 6..7.
  EXPECT_DOUBLE_EQ(sim.issued[0][2], 6.0);
  EXPECT_DOUBLE_EQ(sim.start[0][1], 4.0);
  EXPECT_DOUBLE_EQ(sim.step_time.value(), 7.0);
  // The GPU waited 2 s before a, then 1 s before b and before c.
  EXPECT_DOUBLE_EQ(sim.host_wait[0], 4.0);
}

TEST(SimulatorHost, AHostAheadOfTheGpuCostsOnlyTheFirstIssue) {
  const ProgramSet set = three_gemms();
  const TableCosts costs({{"a", 1}, {"b", 1}, {"c", 1}});
  const HostCosts host = per_op(0.5, 0.25);
  const Simulation sim = simulate(set, costs, {.host = &host});
  // The step's host work 0.25, then a issued at 0.75, b at 1.25, c at 1.75: a runs 0.75..1.75, b and c
  // follow back to back.
  EXPECT_DOUBLE_EQ(sim.start[0][0], 0.75);
  EXPECT_DOUBLE_EQ(sim.step_time.value(), 3.75);
  EXPECT_DOUBLE_EQ(sim.host_wait[0], 0.75);
}

TEST(SimulatorHost, EachOpRecordsHowLongTheHostHeldItBack) {
  // Two ranks of one tp group run a (a GEMM: 4 s on rank 0, 2 s on rank 1), an all-reduce of 3 s once
  // both are there, then b (2 s). The host takes 1 s to issue a GEMM and 5 s to issue a collective.
  ProgramSet set;
  set.world_size = 2;
  const Gemm g = make_gemm(64, 64, 64, 1, DataType::kBFloat16);
  set.programs.push_back({op(0, Stream::kCompute, {}, "a", g),
                          op(1, Stream::kTp, {0}, "ar", CollectiveOp{Collective::kAllReduce, 0, Bytes(64)}),
                          op(2, Stream::kCompute, {1}, "b", g)});
  for (int r = 0; r < 2; ++r) set.ranks.push_back(RankProgram{r, 0, {Group{GroupRole::kTp, {0, 1}}}});
  const TableCosts costs({{"a", 4}, {"ar", 3}, {"b", 2}}, {{{1, "a"}, 2}});
  HostCosts host = per_op(1.0);
  for (auto& phase : host.issue) phase[static_cast<std::size_t>(HostOpClass::kCollective)] = Seconds(5.0);
  const Simulation sim = simulate(set, costs, {.host = &host});
  ASSERT_EQ(sim.simulated.size(), 2u);
  // Both hosts issue a at 1, ar at 6, b at 7. a could start at 0: held 1 s on both ranks. The
  // all-reduce could start when a ended (rank 0 at 5, rank 1 at 3): held 1 s and 3 s. Both reach it at 6,
  // data moves 6..9, and b, issued at 7, waits for it: held 0 s.
  EXPECT_EQ(sim.host_hold[0], (std::vector<double>{1.0, 1.0, 0.0}));
  EXPECT_EQ(sim.host_hold[1], (std::vector<double>{1.0, 3.0, 0.0}));
  EXPECT_DOUBLE_EQ(sim.start[1][1], 6.0);
  EXPECT_DOUBLE_EQ(sim.end[1][2], 11.0);
  // host_wait, unchanged, counts the compute stream's wait alone: a's 1 s.
  EXPECT_DOUBLE_EQ(sim.host_wait[0], 1.0);
  EXPECT_DOUBLE_EQ(sim.host_wait[1], 1.0);
  // Without host costs there is nothing to hold an op back.
  EXPECT_TRUE(simulate(set, costs).host_hold.empty());
}

TEST(SimulatorHost, AFusedAttentionKernelIsIssuedOnceWhereTheFrameworkCallsItOnce) {
  // b and c are the first and a later product of one flash kernel; 2 s to issue a GEMM, 1 s to run it.
  ProgramSet set = three_gemms();
  auto& ops = set.programs[0];
  std::get<Gemm>(ops[1].payload).flash = true;
  std::get<Gemm>(ops[2].payload).flash = true;
  std::get<Gemm>(ops[2].payload).flash_continued = true;
  const TableCosts costs({{"a", 1}, {"b", 1}, {"c", 1}});
  HostCosts once = per_op(2.0);
  ASSERT_EQ(once.attention, AttentionIssue::kPerKernel);
  // Per kernel: a issued at 2, b at 4, c with b (no cost): 2..3, 4..5, 5..6.
  const Simulation kernel = simulate(set, costs, {.host = &once});
  EXPECT_DOUBLE_EQ(kernel.issued[0][2], 4.0);
  EXPECT_DOUBLE_EQ(kernel.step_time.value(), 6.0);
  // Per product (commscale's executor): as three plain GEMMs, 7 s.
  HostCosts each = per_op(2.0);
  each.attention = AttentionIssue::kPerProduct;
  EXPECT_DOUBLE_EQ(simulate(set, costs, {.host = &each}).step_time.value(), 7.0);
  // With an attention figure of 4 s: a issued at 2, b at 6, c with b: 2..3, 6..7, 7..8; per product the
  // figure is not charged (every product is a GEMM call: 7 s as above).
  for (HostCosts* h : {&once, &each}) {
    for (auto& phase : h->issue) phase[static_cast<std::size_t>(HostOpClass::kAttention)] = Seconds(4.0);
    h->attention_given.fill(true);
  }
  EXPECT_DOUBLE_EQ(simulate(set, costs, {.host = &once}).step_time.value(), 8.0);
  EXPECT_DOUBLE_EQ(simulate(set, costs, {.host = &each}).step_time.value(), 7.0);
  EXPECT_EQ(default_attention_issue("commscale"), AttentionIssue::kPerProduct);
  EXPECT_EQ(default_attention_issue("pytorch-eager"), AttentionIssue::kPerKernel);
}

TEST(SimulatorHost, NoCostsIsTheDeviceTimeAlone) {
  const ProgramSet set = three_gemms();
  const TableCosts costs({{"a", 1}, {"b", 1}, {"c", 1}});
  const HostCosts none;
  const Simulation with = simulate(set, costs, {.host = &none});
  const Simulation without = simulate(set, costs);
  EXPECT_DOUBLE_EQ(with.step_time.value(), 3.0);
  EXPECT_DOUBLE_EQ(without.step_time.value(), 3.0);
  EXPECT_TRUE(with.issued.empty());
}

TEST(SimulatorHost, SyncBeforeTheOptimizerWaitsForTheBackward) {
  // A backward GEMM (1 s), then the optimizer (a step-phase memory kernel, 1 s); 0.1 s to issue each.
  ProgramSet set;
  set.world_size = 1;
  Op backward = op(0, Stream::kCompute, {}, "bwd", make_gemm(64, 64, 64, 1, DataType::kBFloat16));
  backward.phase = Phase::kBackward;
  Op optimizer = op(1, Stream::kCompute, {}, "opt", MemoryKernel{});
  optimizer.phase = Phase::kStep;
  set.programs.push_back({backward, optimizer});
  set.ranks.push_back(RankProgram{0, 0, {}});
  const TableCosts costs({{"bwd", 1}, {"opt", 1}});
  HostCosts host;
  host.framework = "test";
  for (auto& phase : host.issue) phase.fill(Seconds(0.1));
  // Without a sync the optimizer is issued at 0.2 and runs when the backward ends: 1.1..2.1.
  EXPECT_DOUBLE_EQ(simulate(set, costs, {.host = &host}).step_time.value(), 2.1);
  // With it the host waits until 1.1, issues the optimizer by 1.2, and it runs 1.2..2.2.
  host.sync = HostSync::kBeforeOptimizer;
  const Simulation sim = simulate(set, costs, {.host = &host});
  EXPECT_DOUBLE_EQ(sim.issued[0][1], 1.2);
  EXPECT_DOUBLE_EQ(sim.step_time.value(), 2.2);
}

TEST(SimulatorHost, SyncAfterP2pWaitsForTheTransfer) {
  // Rank 0 computes 5 s, sends (1 s), then has 1 s of work that does not need the send; rank 1 receives,
  // then uses what arrived (2 s). Every op costs its host 0.1 s to issue.
  ProgramSet set;
  set.world_size = 2;
  set.programs.push_back({op(0, Stream::kCompute, {}, "work", MemoryKernel{}),
                          op(1, Stream::kPpSend, {0}, "send", PointToPoint{P2pDirection::kSend, 0, 1, Bytes(8)}),
                          op(2, Stream::kCompute, {}, "after", MemoryKernel{})});
  set.programs.push_back({op(0, Stream::kPpRecv, {}, "recv", PointToPoint{P2pDirection::kRecv, 0, 0, Bytes(8)}),
                          op(1, Stream::kCompute, {0}, "use", MemoryKernel{})});
  set.ranks = {RankProgram{0, 0, {Group{GroupRole::kPpForward, {0, 1}}}},
               RankProgram{1, 1, {Group{GroupRole::kPpForward, {0, 1}}}}};
  const TableCosts costs({{"work", 5}, {"send", 1}, {"after", 1}, {"recv", 1}, {"use", 2}});
  HostCosts host;
  host.framework = "test";
  for (auto& phase : host.issue) phase.fill(Seconds(0.1));
  // Without the wait: "after" is issued at 0.3 and runs when "work" ends, 5.1..6.1; the transfer runs
  // 5.1..6.1 and "use" 6.1..8.1.
  const Simulation free = simulate(set, costs, {.host = &host});
  EXPECT_DOUBLE_EQ(free.issued[0][2], 0.30000000000000004);
  EXPECT_DOUBLE_EQ(free.step_time.value(), 8.1);
  // With Megatron's torch.cuda.synchronize() after the send and the receive, each host waits for the
  // transfer (6.1) before it issues the next op: "after" 6.2..7.2, "use" 6.2..8.2.
  host.sync_after_p2p = true;
  const Simulation synced = simulate(set, costs, {.host = &host});
  EXPECT_DOUBLE_EQ(synced.issued[0][2], 6.2);
  EXPECT_DOUBLE_EQ(synced.start[0][2], 6.2);
  EXPECT_DOUBLE_EQ(synced.start[1][1], 6.2);
  EXPECT_DOUBLE_EQ(synced.step_time.value(), 8.2);
}

// Interference: a GEMM of 4 s beside an all-reduce of 2 s on one rank (no dependency between them).
class FixedLoads final : public InterferenceCosts {
 public:
  [[nodiscard]] InterferenceModel::Load comm_load(int, const Op&) const override { return {0.25, 0.5}; }
  [[nodiscard]] double gemm_share(int, const Op& op) const override {
    return std::holds_alternative<Gemm>(op.payload) ? 1.0 : 0.0;
  }
};

hw::GpuSpec gpu_with(int sms, double memory_GBps) {
  hw::GpuSpec gpu;
  gpu.name = "test";
  gpu.sm_count.value = sms;
  gpu.memory_bw.value = GBps(memory_GBps);
  return gpu;
}

TEST(Interference, SlowdownsFollowTheProbesShareOfTheGpu) {
  // A probe of 25 SMs of 100 streaming 500 GB/s of 1000: the GEMM beside it 1.25x, the probe 1.5x;
  // holding the SMs alone (spin) 1.1x and 1.0x.
  const hw::GpuSpec gpu = gpu_with(100, 1000);
  const InterferenceModel model({{25, 500, Beside::kGemm, 1.25, 1.5, ""}, {25, 0, Beside::kGemm, 1.1, 1.0, ""}}, gpu,
                                gpu, "test");
  // At the probe's share: its own figures.
  EXPECT_DOUBLE_EQ(model.compute_slowdown(Beside::kGemm, {0.25, 0.5}), 1.25);
  EXPECT_DOUBLE_EQ(model.comm_slowdown(Beside::kGemm, {0.25, 0.5}), 1.5);
  // Half the probe's traffic: halfway between spinning and streaming, 1.1 + (1.25 - 1.1) / 2.
  EXPECT_DOUBLE_EQ(model.compute_slowdown(Beside::kGemm, {0.25, 0.25}), 1.175);
  // Half its SMs: every figure halfway to 1 (linear from no SMs): spin 1.05, stream 1.125, rate 0.25,
  // so at 0.25 of the memory the stream's figure.
  EXPECT_DOUBLE_EQ(model.compute_slowdown(Beside::kGemm, {0.125, 0.25}), 1.125);
  // Nothing measured beside memory kernels: no slowdown.
  EXPECT_DOUBLE_EQ(model.compute_slowdown(Beside::kMemory, {0.25, 0.5}), 1.0);
}

TEST(Interference, OverlapLengthensBothSides) {
  ProgramSet set;
  set.world_size = 1;
  set.programs.push_back({op(0, Stream::kCompute, {}, "gemm", make_gemm(64, 64, 64, 1, DataType::kBFloat16)),
                          op(1, Stream::kDp, {}, "ar", CollectiveOp{Collective::kAllReduce, 0, Bytes(64)})});
  set.ranks.push_back(RankProgram{0, 0, {Group{GroupRole::kDp, {0}}}});
  const TableCosts costs({{"gemm", 4}, {"ar", 2}});
  const hw::GpuSpec gpu = gpu_with(100, 1000);
  const InterferenceModel model({{25, 500, Beside::kGemm, 1.25, 1.5, ""}}, gpu, gpu, "test");
  Simulation sim = simulate(set, costs);
  ASSERT_DOUBLE_EQ(sim.step_time.value(), 4.0);
  const InterferenceResult r = apply_interference(set, costs, FixedLoads{}, model, {}, sim);
  // They overlap for 2 s: the GEMM progresses 2 / 1.25 = 1.6 s of its work there and needs 2.4 s more,
  // so it ends at 4.4; the all-reduce 2 / 1.5 = 4/3 s of its work, so it ends at 2 + 2/3. Iterating on the
  // longer overlap (2 + 2/3 s) converges on the fixed point: the all-reduce ends at t with
  // t = 2 + t / 3 (t = 3), the GEMM at 4 + 3 x 0.2 = 4.6.
  EXPECT_GE(r.iterations, 2);
  EXPECT_NEAR(sim.end[0][1], 3.0, 0.05);
  EXPECT_NEAR(sim.step_time.value(), 4.6, 0.05);
}

TEST(Interference, NoRowsNoChange) {
  const ProgramSet set = three_gemms();
  const TableCosts costs({{"a", 1}, {"b", 1}, {"c", 1}});
  Simulation sim = simulate(set, costs);
  const InterferenceResult r = apply_interference(set, costs, FixedLoads{}, InterferenceModel{}, {}, sim);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_DOUBLE_EQ(sim.step_time.value(), 3.0);
}

}  // namespace
}  // namespace commscale::predict

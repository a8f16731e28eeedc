// runtime/host_pacer.hpp on a clock that the test drives: each read of it moves it one microsecond
// forward, so a spin advances it as a busy loop would, and the test can add the executor's own work.
#include <gtest/gtest.h>

#include "runtime/host_pacer.hpp"

namespace commscale {
namespace {

// A clock in whole microseconds, one more at each read. The costs are half-integer microseconds, so a
// deadline never equals a reading and rounding cannot move a spin's end by a tick.
double at(std::int64_t us) { return static_cast<double>(us) * 1e-6; }
struct TickingClock {
  std::int64_t us = 0;
  double read() { return at(us++); }
};

HostCosts costs(double gemm_us, double kernel_us, double step_us, HostSync sync = HostSync::kNone) {
  HostCosts h;
  h.framework = "test";
  for (auto& phase : h.issue) {
    phase[static_cast<std::size_t>(HostOpClass::kGemm)] = microseconds(gemm_us);
    phase[static_cast<std::size_t>(HostOpClass::kKernel)] = microseconds(kernel_us);
  }
  h.step = microseconds(step_us);
  h.sync = sync;
  return h;
}

Op op_of(OpPayload payload, Phase phase = Phase::kForward) {
  Op op;
  op.payload = std::move(payload);
  op.phase = phase;
  return op;
}

TEST(HostPacer, SpinsTheStepThenEachOpsCostSinceTheOpBefore) {
  TickingClock clock;
  HostPacer pacer(costs(99.5, 39.5, 29.5), [&] { return clock.read(); });
  ASSERT_TRUE(pacer.active());
  // begin_step reads 0 (its mark), spins through reads 1..30 (30 > 0 + 29.5 ends it), then marks at 31.
  pacer.begin_step();
  EXPECT_EQ(pacer.mark(), at(31));
  // A GEMM 99.5 us after 31: the spin's reads end at 131, the op's mark is 132.
  pacer.before_issue(op_of(make_gemm(8, 8, 8, 1, DataType::kBFloat16)));
  EXPECT_EQ(pacer.mark(), at(132));
  // The executor's own work for it took 200 us: the next kernel's 39.5 us have passed, nothing is
  // added (one read to check, one to mark).
  clock.us += 200;
  pacer.before_issue(op_of(MemoryKernel{}));
  EXPECT_EQ(pacer.mark(), at(334));
  // 10 us of own work, then a kernel: spins to 374 (> 334 + 39.5), marks 375.
  clock.us += 10;
  pacer.before_issue(op_of(MemoryKernel{}));
  EXPECT_EQ(pacer.mark(), at(375));
}

TEST(HostPacer, CostsOfTheOpsPhaseAndClass) {
  HostCosts h = costs(99.5, 39.5, 0);
  h.issue[static_cast<std::size_t>(HostPhase::kBackward)][static_cast<std::size_t>(HostOpClass::kGemm)] =
      microseconds(6.5);
  TickingClock clock;
  HostPacer pacer(h, [&] { return clock.read(); });
  pacer.begin_step();  // reads 0 (mark) and 1 (spin ends), marks at 2
  EXPECT_EQ(pacer.mark(), at(2));
  pacer.before_issue(op_of(make_gemm(8, 8, 8, 1, DataType::kBFloat16), Phase::kBackward));
  EXPECT_EQ(pacer.mark(), at(10));  // spins to 9 (> 2 + 6.5), marks 10
  // Recompute counts as forward: the forward GEMM's 99.5 us.
  pacer.before_issue(op_of(make_gemm(8, 8, 8, 1, DataType::kBFloat16), Phase::kRecompute));
  EXPECT_EQ(pacer.mark(), at(111));
}

TEST(HostPacer, AFusedAttentionKernelCostsOneAttentionCall) {
  // The predictor's cost (issue_cost, the same function): 49.5 us for the kernel's first product, nothing
  // for the later ones, as a framework that calls the kernel once (the default, kPerKernel).
  HostCosts h = costs(99.5, 39.5, 0);
  h.issue[static_cast<std::size_t>(HostPhase::kForward)][static_cast<std::size_t>(HostOpClass::kAttention)] =
      microseconds(49.5);
  h.attention_given[static_cast<std::size_t>(HostPhase::kForward)] = true;
  Gemm first = make_gemm(8, 8, 8, 1, DataType::kBFloat16);
  first.flash = true;
  Gemm later = first;
  later.flash_continued = true;
  TickingClock clock;
  HostPacer pacer(h, [&] { return clock.read(); });
  pacer.begin_step();  // marks at 2
  pacer.before_issue(op_of(first));
  EXPECT_EQ(pacer.mark(), at(53));  // spins to 52 (> 2 + 49.5), marks 53
  pacer.before_issue(op_of(later));
  EXPECT_EQ(pacer.mark(), at(55));  // no cost: one read to check, one to mark
}

TEST(HostPacer, SyncsOnceBeforeTheFirstStepOpOfEachStep) {
  TickingClock clock;
  HostPacer pacer(costs(0, 0, 0, HostSync::kBeforeOptimizer), [&] { return clock.read(); });
  EXPECT_TRUE(pacer.active());  // no cost, but a synchronisation
  pacer.begin_step();
  const Op backward = op_of(MemoryKernel{}, Phase::kBackward);
  const Op step = op_of(MemoryKernel{}, Phase::kStep);
  EXPECT_FALSE(pacer.must_sync_before(backward));
  EXPECT_TRUE(pacer.must_sync_before(step));
  clock.us = 500;  // the wait
  pacer.synced();
  EXPECT_EQ(pacer.mark(), at(500));
  EXPECT_FALSE(pacer.must_sync_before(step));  // once a step
  pacer.begin_step();
  EXPECT_TRUE(pacer.must_sync_before(step));
}

TEST(HostPacer, NoneCostsNothingAndNeverReadsTheClock) {
  int reads = 0;
  HostPacer pacer(HostCosts{}, [&] {
    ++reads;
    return 0.0;
  });
  EXPECT_FALSE(pacer.active());
  pacer.begin_step();
  pacer.before_issue(op_of(MemoryKernel{}));
  EXPECT_FALSE(pacer.must_sync_before(op_of(MemoryKernel{}, Phase::kStep)));
  EXPECT_EQ(reads, 0);
}

}  // namespace
}  // namespace commscale

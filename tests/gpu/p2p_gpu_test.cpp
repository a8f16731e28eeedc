// `commscale p2p` on real GPUs: small copies, every one checked. Skips where no GPU is visible; one
// process drives every GPU, so under mpirun only world rank 0 runs these.
#include <gtest/gtest.h>

#include "bench/p2p.hpp"
#include "bench/p2p_transfers.hpp"
#include "runtime/discovery.hpp"
#include "runtime/gpu.hpp"
#include "runtime/mpi.hpp"

namespace commscale {
namespace {

class P2p : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    gpus_ = visible_gpu_count(&why);
    if (gpus_ == 0) GTEST_SKIP() << why;
    if (MpiComm::world().rank() != 0) GTEST_SKIP() << "p2p runs on world rank 0";
  }

  static P2pOptions small_options() {
    P2pOptions o;
    o.size = Bytes(8 * kMiB + 5);  // not a multiple of 16: the SM copy's tail is checked too
    o.copies = 2;
    o.iters = 3;
    o.warmup = 1;
    o.latency_accesses = 2000;
    return o;
  }

  static void expect_verified(const BandwidthResult& r, const std::string& what) {
    ASSERT_TRUE(r.measured) << what;
    EXPECT_EQ(r.wrong_bytes, 0u) << what;
    EXPECT_EQ(r.samples_us.size(), 3u) << what;
    EXPECT_GT(r.bw.value(), 0.0) << what;
  }

  int gpus_ = 0;
};

TEST_F(P2p, TheCheckCatchesWrongAndMissingData) {
  const Bytes size(1 * kMiB + 3);
  const ScopedDevice on(0);  // the slot's streams are created on the current device
  GpuSlot slot(0, 1, size);
  slot.fill(slot.src(), size, 7);
  EXPECT_EQ(slot.count_wrong(slot.src(), size, 7), 0u);
  EXPECT_GT(slot.count_wrong(slot.src(), size, 8), size.count() / 2);  // another source's data
  slot.poison(slot.dst(), size);
  EXPECT_EQ(slot.count_wrong(slot.dst(), size, 7), size.count());  // nothing arrived
}

TEST_F(P2p, HostAndGpuCopiesOnOneGpuAreVerified) {
  P2pOptions o = small_options();
  o.devices = {0};
  const MachineDiscovery m = discover_machine(o.devices);
  const P2pReport r = run_p2p(o, m);
  ASSERT_EQ(r.hosts.size(), 1u);
  EXPECT_TRUE(r.pairs.empty());
  expect_verified(r.hosts[0].h2d, "host to GPU");
  expect_verified(r.hosts[0].d2h, "GPU to host");
  expect_verified(r.hosts[0].bidir, "host both ways");
  EXPECT_EQ(r.hosts[0].bidir.bytes_per_copy.count(), 2 * o.size.count());
  ASSERT_TRUE(r.hosts[0].latency.measured);
  EXPECT_EQ(r.hosts[0].latency.wrong_bytes, 0u);
  EXPECT_GT(r.hosts[0].latency.stats.median, 0.0);
  EXPECT_TRUE(r.passed());
}

TEST_F(P2p, PeerCopiesBetweenTwoGpusAreVerified) {
  if (gpus_ < 2) GTEST_SKIP() << "needs 2 GPUs";
  P2pOptions o = small_options();
  o.devices = {0, 1};
  o.host = false;
  const MachineDiscovery m = discover_machine(o.devices);
  const P2pReport r = run_p2p(o, m);
  ASSERT_EQ(r.pairs.size(), 2u);
  for (const PairResult& p : r.pairs) {
    const std::string what = "GPU" + std::to_string(p.src) + " -> GPU" + std::to_string(p.dst);
    expect_verified(p.ce_uni, what + " ce");
    expect_verified(p.ce_bi, what + " ce both ways");
    if (p.path == PeerPath::kP2p) {
      expect_verified(p.sm_uni, what + " sm");
      expect_verified(p.sm_bi, what + " sm both ways");
      EXPECT_EQ(p.latency.wrong_bytes, 0u) << what;
      EXPECT_GT(p.latency.stats.median, 0.0) << what;
    }
  }
  EXPECT_TRUE(r.passed());
}

TEST_F(P2p, TheStagedPathIsVerified) {
  if (gpus_ < 2) GTEST_SKIP() << "needs 2 GPUs";
  P2pOptions o = small_options();
  o.devices = {0, 1};
  o.host = false;
  o.no_p2p = true;
  const P2pReport r = run_p2p(o, discover_machine(o.devices));
  ASSERT_EQ(r.pairs.size(), 2u);
  for (const PairResult& p : r.pairs) {
    EXPECT_EQ(p.path, PeerPath::kStaged);
    EXPECT_EQ(p.why_staged, "--no-p2p");
    expect_verified(p.ce_uni, "staged");
    expect_verified(p.ce_bi, "staged both ways");
    EXPECT_FALSE(p.sm_uni.measured);
    EXPECT_FALSE(p.latency.measured);
  }
  EXPECT_EQ(r.notes.size(), 1u);
}

}  // namespace
}  // namespace commscale

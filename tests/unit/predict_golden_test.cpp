// Golden predictions for catalog clusters: GPT-3 1.3B, LLaMA-2 7B and 13B on an HGX A100 node, 8 x RTX 4090
// and 8 x RTX 5090 without P2P, 4 x RTX 3090 in NVLink pairs, each with a fixed plan (the best or near it
// by `search`; global batch 64). They pin the model: a change to any cost, constant or rule shows here,
// and the commit that changes them says why. Values from this build; tolerance 1e-6 relative.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "predict/prediction.hpp"
#include "predict_test_support.hpp"

namespace commscale::predict {
namespace {

struct Golden {
  std::string cluster;
  std::string model;
  ParallelPlan plan;
  bool fits;
  double max_memory_gib;
  double step_time_s;  // predicted even when the plan does not fit (the figures say what it would take)
  double mfu;
  double exposed_comm_s;
};

ParallelPlan plan(int dp, int tp, int pp, int zero, Recompute r, int mb = 1, bool sp = false) {
  ParallelPlan p = testing::plan(dp, tp, pp, 64);
  p.zero_stage = zero;
  p.recompute = r;
  p.micro_batch = mb;
  p.sequence_parallel = sp;
  return p;
}

constexpr Recompute kNone = Recompute::kNone;
constexpr Recompute kSelective = Recompute::kSelective;
constexpr Recompute kFull = Recompute::kFull;

std::vector<Golden> goldens() {
  return {
      {"hgx-a100", "gpt3-1.3b", plan(8, 1, 1, 1, kNone, 2), true, 30.905638, 0.929698139, 0.513146936, 0.0155477729},
      {"rtx4090-8x-pcie", "gpt3-1.3b", plan(8, 1, 1, 1, kNone), true, 19.827513, 1.94477261, 0.463296932, 0.221422536},
      {"rtx3090-4x-nvlink-pairs", "gpt3-1.3b", plan(4, 1, 1, 1, kSelective), true, 14.168255, 8.3857628, 0.499996966,
       0.162211963},
      {"rtx5090-8x-pcie", "gpt3-1.3b", plan(8, 1, 1, 1, kNone), true, 19.827513, 1.54393688, 0.460176808, 0.097131677},
      {"hgx-a100", "llama2-7b", plan(4, 2, 1, 1, kNone, 1, true), true, 48.2409935, 8.30530757, 0.582771646,
       0.35649701},
      {"rtx4090-8x-pcie", "llama2-7b", plan(4, 1, 2, 2, kFull), true, 20.257996, 21.6495221, 0.422231247, 0.458526154},
      {"rtx3090-4x-nvlink-pairs", "llama2-7b", plan(1, 4, 1, 0, kFull, 1, true), false, 27.477600, 127.908341,
       0.332568804, 39.066909},
      {"rtx5090-8x-pcie", "llama2-7b", plan(4, 2, 1, 2, kSelective), true, 29.5340786, 15.0801591, 0.477989963,
       1.60503565},
      {"hgx-a100", "llama2-13b", plan(2, 4, 1, 1, kNone, 1, true), true, 51.2189503, 15.8428874, 0.577906898,
       1.45568692},
      {"rtx4090-8x-pcie", "llama2-13b", plan(1, 8, 1, 0, kFull, 1, true), false, 26.505692, 120.966406, 0.142945994,
       81.3406393},
      {"rtx3090-4x-nvlink-pairs", "llama2-13b", plan(1, 4, 1, 0, kFull, 1, true), false, 51.005203, 219.532125,
       0.366539155, 60.761817},
      {"rtx5090-8x-pcie", "llama2-13b", plan(2, 1, 4, 2, kFull), true, 31.523563, 31.0644264, 0.438934223, 0.220450311},
  };
}

TEST(GoldenPredictions, CatalogClusters) {
  for (const Golden& g : goldens()) {
    SCOPED_TRACE(g.cluster + " " + g.model);
    const Target t = testing::target(g.cluster);
    const Prediction p = predict_step(prepare_for(CheckedPlan(find_preset(g.model, "test"), g.plan), t, {}), t);
    EXPECT_EQ(p.fit.fits, g.fits);
    EXPECT_NEAR(p.fit.worst_total.gib(), g.max_memory_gib, 1e-6);
    EXPECT_NEAR(p.summary.step_time_s, g.step_time_s, 1e-6 * g.step_time_s);
    EXPECT_NEAR(p.summary.mfu.value_or(0.0), g.mfu, 1e-6 * g.mfu);
    EXPECT_NEAR(p.summary.exposed_comm_s, g.exposed_comm_s, 1e-6 * g.step_time_s);
  }
}

// The runs of issue 6's accuracy study (item 7) on the project's GPU machine: GPT-3 6.7B cut to 8 layers
// without embedding (train --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch 2 --global-batch 8) on
// one H200 and on two over NVLink (h200x2), host-staged (h200x2-nop2p: NCCL_P2P_DISABLE=1) and sockets
// (h200x2-sockets: P2P and SHM disabled), each with tp 2, dp 2 and pp 2. Pinned before any of them was
// measured, so that the measurement checks these numbers and not later ones; moved once since, by the
// default compute model's refit to calibrate's rows (2026-12-03: steps 2-9% shorter, the communication
// unchanged; the 2-GPU runs are still to be measured).
struct GpuMachineGolden {
  std::string cluster;
  int dp, tp, pp;
  const char* link;  // the one group's bottleneck class
  double max_memory_gib, step_time_s, mfu, exposed_comm_s, bubble_s;
};

TEST(GoldenPredictions, AccuracyRunsOnTheGpuMachine) {
  TransformerConfig m = find_preset("gpt3-6.7b", "test");
  m.layers = 8;
  m.vocab = 0;
  const std::vector<GpuMachineGolden> goldens = {
      {"h200x1", 1, 1, 1, "", 40.2563477, 0.31658896, 0.547536229, 0, 0},
      {"h200x2", 1, 2, 1, "nvlink", 21.7546387, 0.173716282, 0.498928262, 0.00883847981, 0},
      {"h200x2", 2, 1, 1, "nvlink", 40.2563477, 0.164640806, 0.526430627, 0.000319892339, 0},
      {"h200x2", 1, 1, 2, "nvlink", 28.2531738, 0.196902547, 0.440176951, 0.000538804988, 0.0380670117},
      {"h200x2-nop2p", 1, 2, 1, "host_staged", 21.7546387, 0.30542109, 0.283778578, 0.140543288, 0},
      {"h200x2-nop2p", 2, 1, 1, "host_staged", 40.2563477, 0.236869416, 0.365906093, 0.0725485026, 0},
      {"h200x2-nop2p", 1, 1, 2, "host_staged", 28.2531738, 0.201391169, 0.430366253, 0.00502742696, 0.0380670117},
      {"h200x2-sockets", 1, 2, 1, "socket", 21.7546387, 1.57918159, 0.0548841013, 1.41430379, 0},
      {"h200x2-sockets", 2, 1, 1, "socket", 40.2563477, 1.19187488, 0.0727190109, 1.02755397, 0},
      {"h200x2-sockets", 1, 1, 2, "socket", 28.2531738, 0.241177784, 0.359369595, 0.0474014564, 0.035479598},
  };
  for (const GpuMachineGolden& g : goldens) {
    SCOPED_TRACE(fmt::format("{} dp {} tp {} pp {}", g.cluster, g.dp, g.tp, g.pp));
    ParallelPlan p = testing::plan(g.dp, g.tp, g.pp, 8);
    p.micro_batch = 2;
    const Target t = testing::target(g.cluster);
    const Prediction pr = predict_step(prepare_for(CheckedPlan(m, p), t, {}), t);
    EXPECT_TRUE(pr.fit.fits);
    EXPECT_NEAR(pr.fit.worst_total.gib(), g.max_memory_gib, 1e-6);
    EXPECT_NEAR(pr.summary.step_time_s, g.step_time_s, 1e-6 * g.step_time_s);
    EXPECT_NEAR(pr.summary.mfu.value_or(0.0), g.mfu, 1e-6 * g.mfu);
    EXPECT_NEAR(pr.summary.exposed_comm_s, g.exposed_comm_s, 1e-6 * g.step_time_s);
    EXPECT_NEAR(pr.summary.bubble_s, g.bubble_s, 1e-6 * g.step_time_s);
    if (*g.link != '\0') {
      ASSERT_EQ(pr.groups.size(), 1u);
      EXPECT_EQ(hw::name(pr.groups.front().link), g.link);
    } else {
      EXPECT_TRUE(pr.groups.empty());
    }
  }
}

}  // namespace
}  // namespace commscale::predict

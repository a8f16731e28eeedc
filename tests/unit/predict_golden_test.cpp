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
      {"hgx-a100", "gpt3-1.3b", plan(8, 1, 1, 1, kNone, 2), true, 30.905638, 0.964106139, 0.494833227, 0.0155577597},
      {"rtx4090-8x-pcie", "gpt3-1.3b", plan(8, 1, 1, 1, kNone), true, 19.827513, 2.10163326, 0.428717608, 0.207128828},
      {"rtx3090-4x-nvlink-pairs", "gpt3-1.3b", plan(4, 1, 1, 1, kSelective), true, 14.168255, 8.72721896, 0.480434372,
       0.16221539},
      {"rtx5090-8x-pcie", "gpt3-1.3b", plan(8, 1, 1, 1, kNone), true, 19.827513, 1.70996982, 0.415495021, 0.0971394633},
      {"hgx-a100", "llama2-7b", plan(4, 2, 1, 1, kNone, 1, true), true, 48.2409935, 8.66592181, 0.558520821,
       0.356513377},
      {"rtx4090-8x-pcie", "llama2-7b", plan(4, 1, 2, 2, kFull), true, 20.257996, 24.7073133, 0.369975668, 0.458560919},
      {"rtx3090-4x-nvlink-pairs", "llama2-7b", plan(1, 4, 1, 0, kFull, 1, true), false, 27.477600, 134.058564,
       0.3173115, 39.066909},
      {"rtx5090-8x-pcie", "llama2-7b", plan(4, 2, 1, 2, kSelective), true, 29.5340786, 17.3492826, 0.415473357,
       1.60505187},
      {"hgx-a100", "llama2-13b", plan(2, 4, 1, 1, kNone, 1, true), true, 51.2189503, 16.6878279, 0.548646235,
       1.45568692},
      {"rtx4090-8x-pcie", "llama2-13b", plan(1, 8, 1, 0, kFull, 1, true), false, 26.505692, 127.13509, 0.136010154,
       79.9421224},
      {"rtx3090-4x-nvlink-pairs", "llama2-13b", plan(1, 4, 1, 0, kFull, 1, true), false, 51.005203, 229.98166,
       0.349884941, 60.761817},
      {"rtx5090-8x-pcie", "llama2-13b", plan(2, 1, 4, 2, kFull), true, 31.523563, 35.2187523, 0.387158516, 0.22074538},
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
// unchanged; the 2-GPU runs are still to be measured), and by default interference figures
// (topologies/interference.json, 2026-12-05: overlapped steps 0-2% longer).
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
      {"h200x2", 1, 2, 1, "nvlink", 21.7546387, 0.176096655, 0.492184036, 0.00883847981, 0},
      {"h200x2", 2, 1, 1, "nvlink", 40.2563477, 0.167520715, 0.517380567, 0.000324712584, 0},
      {"h200x2", 1, 1, 2, "nvlink", 28.2531738, 0.197059774, 0.439825747, 0.000556756306, 0.0380910881},
      {"h200x2-nop2p", 1, 2, 1, "host_staged", 21.7546387, 0.30647088, 0.282806518, 0.138243316, 0},
      {"h200x2-nop2p", 2, 1, 1, "host_staged", 40.2563477, 0.239769836, 0.361479843, 0.0681655228, 0},
      {"h200x2-nop2p", 1, 1, 2, "host_staged", 28.2531738, 0.202190153, 0.428665598, 0.00508428135, 0.0381429359},
      {"h200x2-sockets", 1, 2, 1, "socket", 21.7546387, 1.5792895, 0.0548803513, 1.41148444, 0},
      {"h200x2-sockets", 2, 1, 1, "socket", 40.2563477, 1.19217399, 0.072700766, 1.02166278, 0},
      {"h200x2-sockets", 1, 1, 2, "socket", 28.2531738, 0.247102484, 0.350753102, 0.0472154052, 0.036249977},
  };
  for (const GpuMachineGolden& g : goldens) {
    SCOPED_TRACE(fmt::format("{} dp {} tp {} pp {}", g.cluster, g.dp, g.tp, g.pp));
    ParallelPlan p = testing::plan(g.dp, g.tp, g.pp, 8);
    p.micro_batch = 2;
    p.framework = Framework::kCommscale;  // train's runs: the executor's GEMMs
    const Target t = testing::executor_target(g.cluster);
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

// `train`'s GPU step engine under mpirun with 1 and 2 ranks: cuBLASLt GEMMs, the memory-bound kernels,
// CUDA events for dependencies, NCCL groups and point-to-point links, and offload's host copies and host
// optimizer. Skips without a GPU.
#include <gtest/gtest.h>

#include "../support/train_checks.hpp"
#include "runtime/gpu.hpp"
#include "runtime/session.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

class GpuTrain : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (visible_gpu_count(&why) == 0) GTEST_SKIP() << why;
    if (MpiComm::world().size() > visible_gpu_count(&why)) GTEST_SKIP() << "more ranks than GPUs";
  }

  static void run(int dp, int tp, int pp, bool offload = false) {
    const MpiComm world = MpiComm::world();
    if (dp * tp * pp != world.size()) GTEST_SKIP() << "needs " << dp * tp * pp << " ranks";
    RuntimeOptions runtime;
    runtime.backend = BackendChoice::kGpu;
    const RankSession session = start_rank_session(runtime, world);
    ParallelPlan plan;
    plan.dp = dp;
    plan.tp = tp;
    plan.pp = pp;
    plan.global_batch = dp * 2 * pp;
    plan.bucket_bytes = Bytes(64 * kKiB);
    if (offload) {
      plan.zero_stage = 3;
      plan.offload_optimizer = OffloadDevice::kCpu;
      plan.offload_params = OffloadDevice::kCpu;
      plan.offload_activations = true;
    }
    TrainOptions options;
    options.warmup_steps = 1;
    options.steps = 2;
    options.gemm_check = true;
    const PreparedStep step = prepare_step(CheckedPlan(find_preset("tiny", "test"), plan), {}, std::nullopt);
    const TrainRun r = run_training(step, options, *session.backend, world);
    if (world.rank() != 0) return;
    testing::check_run(step.program, r, options.steps);
    if (offload) {
      // The copies ran on their own streams (check_run: in order, after their dependencies) and took time.
      for (int s = 0; s < options.steps; ++s) {
        const StepBreakdown b = break_down_step(step.program, r.timeline, s);
        ASSERT_TRUE(b.groups.contains("offload"));
        EXPECT_GT(b.groups.at("offload").busy.value(), 0.0);
      }
    }
    ASSERT_FALSE(r.gemm_checks.empty());
    for (const GemmCheck& c : r.gemm_checks) {
      EXPECT_GT(c.in_step_s, 0.0);
      EXPECT_GT(c.standalone_s, 0.0);
    }
  }
};

TEST_F(GpuTrain, OneRank) { run(1, 1, 1); }
TEST_F(GpuTrain, DataParallel2) { run(2, 1, 1); }
TEST_F(GpuTrain, TensorParallel2) { run(1, 2, 1); }
TEST_F(GpuTrain, PipelineParallel2) { run(1, 1, 2); }
// ZeRO-3 with the optimizer, the parameters and the activations offloaded (src/runtime/TRAIN.md).
TEST_F(GpuTrain, OffloadEverything) { run(1, 1, 1, true); }
TEST_F(GpuTrain, OffloadEverythingDataParallel2) { run(2, 1, 1, true); }

}  // namespace
}  // namespace commscale

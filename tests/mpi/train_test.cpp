// `train`'s executor on the CPU backend under real mpirun (ctest runs this binary with 1 to 4 ranks,
// and the 3-D plan with 8): every op runs once per step, in dependency and stream order, collectives
// and transfers line up across ranks, and the breakdown adds up to the step time.
#include <gtest/gtest.h>

#include "../support/train_checks.hpp"
#include "parallel/prepared_step.hpp"
#include "program/breakdown.hpp"
#include "runtime/executor.hpp"
#include "runtime/session.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

struct Shape {
  int dp;
  int tp;
  int pp;
};

TransformerConfig tiny() { return find_preset("tiny", "test"); }

ParallelPlan plan_for(const Shape& s) {
  ParallelPlan p;
  p.dp = s.dp;
  p.tp = s.tp;
  p.pp = s.pp;
  p.micro_batch = 1;
  p.global_batch = s.dp * 2 * s.pp;  // two microbatches per pipeline stage
  p.bucket_bytes = Bytes(64 * kKiB);  // several buckets even for the tiny model
  return p;
}

constexpr int kSteps = 2;  // timed, after one warm-up step

// `plan` trained on the CPU backend over the job's ranks; rank 0 checks the run (train_checks.hpp).
struct CpuRun {
  PreparedStep step;
  TrainRun run;
};
CpuRun train_on_cpu(const ParallelPlan& plan, const MpiComm& world) {
  RuntimeOptions runtime;
  runtime.backend = BackendChoice::kCpu;
  const RankSession session = start_rank_session(runtime, world);
  TrainOptions options;
  options.warmup_steps = 1;
  options.steps = kSteps;
  PreparedStep step = prepare_step(CheckedPlan(tiny(), plan), {}, std::nullopt);
  TrainRun run = run_training(step, options, *session.backend, world);
  if (world.rank() == 0) testing::check_run(step.program, run, kSteps);
  return {std::move(step), std::move(run)};
}

void run_shape(const Shape& shape, KernelSet kernels = KernelSet::kFused) {
  const MpiComm world = MpiComm::world();
  if (shape.dp * shape.tp * shape.pp != world.size()) GTEST_SKIP() << "needs " << shape.dp * shape.tp * shape.pp << " ranks";
  ParallelPlan plan = plan_for(shape);
  plan.kernels = kernels;
  (void)train_on_cpu(plan, world);
}

TEST(CpuTrain, DataParallel2) { run_shape({2, 1, 1}); }
TEST(CpuTrain, TensorParallel2) { run_shape({1, 2, 1}); }
TEST(CpuTrain, PipelineParallel2) { run_shape({1, 1, 2}); }
TEST(CpuTrain, DataParallel4) { run_shape({4, 1, 1}); }
TEST(CpuTrain, TensorParallel2PipelineParallel2) { run_shape({1, 2, 2}); }
TEST(CpuTrain, DataParallel2TensorParallel2) { run_shape({2, 2, 1}); }
TEST(CpuTrain, DataParallel2PipelineParallel2) { run_shape({2, 1, 2}); }
TEST(CpuTrain, AllThree) { run_shape({2, 2, 2}); }
// Eager PyTorch's kernel list (predict --kernels eager) is a step program like any other: it runs.
TEST(CpuTrain, EagerKernelsTensorParallel2PipelineParallel2) { run_shape({1, 2, 2}, KernelSet::kEager); }

// Offload (src/runtime/TRAIN.md): ZeRO-3 over the job's ranks with the optimizer, the parameters and the
// activations offloaded. Every host copy runs on its copy stream once per step, with the bytes the program
// gives it; the host optimizer runs on the compute stream; the breakdown charges the copies to "offload".
void run_offload() {
  const MpiComm world = MpiComm::world();
  ParallelPlan plan = plan_for({world.size(), 1, 1});
  plan.zero_stage = 3;
  plan.offload_optimizer = OffloadDevice::kCpu;
  plan.offload_params = OffloadDevice::kCpu;
  plan.offload_activations = true;
  const auto [step, run] = train_on_cpu(plan, world);
  if (world.rank() != 0) return;
  for (int r = 0; r < world.size(); ++r) {
    std::uint64_t out = 0;
    std::uint64_t in = 0;
    int updates = 0;
    for (const Op& op : ops_of(step.program, r)) {
      if (const auto* h = std::get_if<HostCopy>(&op.payload)) {
        EXPECT_EQ(op.stream, h->direction == CopyDirection::kToHost ? Stream::kDeviceToHost : Stream::kHostToDevice);
        (h->direction == CopyDirection::kToHost ? out : in) += h->bytes.count();
      }
      const auto* k = std::get_if<MemoryKernel>(&op.payload);
      if (k != nullptr && k->kind == MemoryKernelKind::kHostOptimizer) {
        ++updates;
        EXPECT_EQ(op.stream, Stream::kCompute);
      }
    }
    EXPECT_GT(out, 0U) << "rank " << r << ": activations to the host";
    EXPECT_GT(in, out) << "rank " << r << ": activations back and the parameter shards in";
    EXPECT_EQ(updates, 1) << "rank " << r;
  }
  for (int s = 0; s < kSteps; ++s) {
    const StepBreakdown b = break_down_step(step.program, run.timeline, s);
    ASSERT_TRUE(b.groups.contains("offload"));
    EXPECT_GT(b.groups.at("offload").busy.value(), 0.0);
  }
}
TEST(CpuTrain, OffloadEverything) { run_offload(); }

TEST(CpuTrain, PlanMustMatchTheJob) {
  const MpiComm world = MpiComm::world();
  RuntimeOptions runtime;
  runtime.backend = BackendChoice::kCpu;
  const RankSession session = start_rank_session(runtime, world);
  const Shape wrong{world.size() + 1, 1, 1};
  const PreparedStep step = prepare_step(CheckedPlan(tiny(), plan_for(wrong)), {}, std::nullopt);
  EXPECT_THROW((void)run_training(step, TrainOptions{}, *session.backend, world), Error);
}

}  // namespace
}  // namespace commscale

// The stage model (the fast path of search) against the full simulation of the real step program.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "predict/prediction.hpp"
#include "predict/stage_model.hpp"
#include "predict_test_support.hpp"

namespace commscale::predict {
namespace {

using testing::plan;
using testing::target;

struct Case {
  std::string cluster;
  std::string model;
  ParallelPlan plan;
};

ParallelPlan with(ParallelPlan p, auto&& change) {
  change(p);
  return p;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"hgx-a100", "gpt3-1.3b", plan(8, 1, 1, 64)});
  out.push_back({"hgx-a100", "gpt3-1.3b", plan(2, 2, 2, 32)});
  out.push_back({"hgx-a100", "gpt3-1.3b", with(plan(1, 4, 2, 16), [](ParallelPlan& p) {
                   p.schedule = ScheduleKind::kInterleaved;
                   p.chunks = 2;
                   p.sequence_parallel = true;
                 })});
  out.push_back({"hgx-a100", "gpt3-2.7b", with(plan(4, 2, 1, 32), [](ParallelPlan& p) { p.zero_stage = 1; })});
  out.push_back({"hgx-a100", "gpt3-2.7b", with(plan(4, 1, 2, 32), [](ParallelPlan& p) { p.zero_stage = 2; })});
  out.push_back({"hgx-a100", "gpt3-2.7b", with(plan(8, 1, 1, 16), [](ParallelPlan& p) {
                   p.zero_stage = 3;
                   p.recompute = Recompute::kFull;
                 })});
  out.push_back({"rtx4090-8x-pcie", "gpt3-1.3b", with(plan(2, 2, 2, 32), [](ParallelPlan& p) {
                   p.recompute = Recompute::kSelective;
                   p.schedule = ScheduleKind::kGpipe;
                 })});
  out.push_back({"rtx3090-4x-nvlink-pairs", "llama2-7b", with(plan(1, 2, 2, 8), [](ParallelPlan& p) {
                   p.recompute = Recompute::kFull;
                   p.micro_batch = 1;
                 })});
  // Eager kernels: every microbatch after the first accumulates its weight gradients by adds.
  out.push_back({"hgx-a100", "gpt3-1.3b", with(plan(8, 1, 1, 64), [](ParallelPlan& p) { p.kernels = KernelSet::kEager; })});
  out.push_back({"rtx4090-8x-pcie", "gpt3-1.3b", with(plan(2, 2, 2, 32), [](ParallelPlan& p) {
                   p.kernels = KernelSet::kEager;
                   p.flash_attention = true;
                 })});
  return out;
}

TEST(StageModel, WithinTwoPercentOfTheFullSimulation) {
  for (const Case& c : cases()) {
    const Target t = target(c.cluster);
    const TransformerConfig m = find_preset(c.model, "test");
    const Prediction full = predict_plan(m, c.plan, t);
    PlanEvaluator evaluator(m, t, MemoryOptions{});
    const PlanEstimate fast = evaluator.estimate(c.plan);
    const double step = full.summary.step_time_s;
    const std::string what = fmt::format(
        "{} {} dp{} tp{} pp{} zero{} {} kernels: full {:.5f} s (compute {:.5f} exposed {:.5f} bubble {:.5f}), "
        "fast {:.5f} s (compute {:.5f} exposed {:.5f} bubble {:.5f})",
        c.cluster, c.model, c.plan.dp, c.plan.tp, c.plan.pp, c.plan.zero_stage, name(c.plan.kernels), step, full.summary.compute_s,
        full.summary.exposed_comm_s, full.summary.bubble_s, fast.step_time.value(), fast.compute.value(),
        fast.exposed_comm.value(), fast.bubble.value());
    SCOPED_TRACE(what);
    std::cout << what << "\n";
    EXPECT_NEAR(fast.step_time.value(), step, 0.02 * step);
    EXPECT_NEAR(fast.compute.value(), full.summary.compute_s, 0.02 * step);
    EXPECT_NEAR(fast.exposed_comm.value(), full.summary.exposed_comm_s, 0.02 * step);
    EXPECT_NEAR(fast.mfu, *full.summary.mfu, 0.02 * *full.summary.mfu);
    EXPECT_EQ(fast.fits, full.fit.fits);
    EXPECT_EQ(fast.memory, full.fit.worst_total);
  }
}

}  // namespace
}  // namespace commscale::predict

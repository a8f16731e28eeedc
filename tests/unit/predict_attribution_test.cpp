// Where a predicted op's time went (program/timeline.hpp, EventAttribution): the latency term the costs
// give a communication op, by hand, and the per-op attribution of a prediction against the figures the
// prediction reports for the whole step.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "parallel/program_builder.hpp"
#include "predict/op_costs.hpp"
#include "predict/prediction.hpp"
#include "predict_test_support.hpp"

namespace commscale::predict {
namespace {

using testing::op;

bool communication(const Op& o) {
  return std::holds_alternative<CollectiveOp>(o.payload) || std::holds_alternative<PointToPoint>(o.payload);
}

TEST(ProgramCosts, LatencyIsTheCommModelsLatencyTermByHand) {
  // Two H200s over NV18, one tp group: a GEMM, an all-reduce of 1 KiB, an all-reduce of 64 MiB.
  ProgramSet set;
  set.world_size = 2;
  set.programs.push_back(
      {op(0, Stream::kCompute, {}, "a", make_gemm(64, 64, 64, 1, DataType::kBFloat16)),
       op(1, Stream::kTp, {0}, "small", CollectiveOp{Collective::kAllReduce, 0, Bytes(1024)}),
       op(2, Stream::kTp, {1}, "large", CollectiveOp{Collective::kAllReduce, 0, Bytes(std::uint64_t{64} << 20)})});
  for (int r = 0; r < 2; ++r) set.ranks.push_back(RankProgram{r, 0, {Group{GroupRole::kTp, {0, 1}}}});
  const Target t = testing::target("h200x2");
  LinkAnalyzer analyzer(t.graph, t.achievable);
  const ProgramCosts costs(set, t, analyzer);
  const std::vector<Op>& ops = set.programs[0];
  // 1 KiB runs ring LL (predict_collective_test.cpp): latency 6.6 us base + 2 steps x 0.6 us NVLink = 7.8 us,
  // the bytes at 141 GB/s (LL's cap on Hopper) the rest of its 7.8 + 1024 / 141e3 us.
  EXPECT_NEAR(to_us(costs.latency(0, ops[1])), 7.8, 1e-9);
  EXPECT_NEAR(to_us(costs.duration(0, ops[1])), 7.8 + 1024.0 / 141e3, 1e-9);
  // Asked again (the cache), and from the other rank: the same.
  EXPECT_EQ(costs.latency(0, ops[1]).value(), costs.latency(1, ops[1]).value());
  // 64 MiB: whatever protocol NCCL picks, the latency is its estimate's, and a small part of the time.
  const CommEstimate large =
      t.comm.collective(Collective::kAllReduce, Bytes(std::uint64_t{64} << 20), *costs.group_links(0, 0));
  EXPECT_EQ(costs.latency(0, ops[2]).value(), large.latency.value());
  EXPECT_EQ(costs.duration(0, ops[2]).value(), large.time.value());
  EXPECT_GT(costs.latency(0, ops[2]).value(), 0.0);
  EXPECT_LT(costs.latency(0, ops[2]).value(), 0.1 * large.time.value());
  // A compute op has no latency term.
  EXPECT_EQ(costs.latency(0, ops[0]).value(), 0.0);
}

// tiny, tp 2 x pp 2 on HGX H200, a host that issues every op in 20 us (slower than the tiny ops run)
// and an interference probe beside GEMMs and memory kernels: every part of the attribution is at work.
struct AttributedRun {
  PreparedStep step;
  Target target;
  Prediction prediction;
};

AttributedRun attributed_run() {
  Target t = testing::target("hgx-h200");
  t.host.framework = "test";
  for (auto& phase : t.host.issue) phase.fill(Seconds(20e-6));
  const hw::GpuSpec& gpu = t.cluster.gpu;
  t.interference = InterferenceModel(
      {{32, 1000, Beside::kGemm, 1.3, 1.4, ""}, {32, 1000, Beside::kMemory, 1.2, 1.3, ""}}, gpu, gpu, "test");
  PreparedStep step = prepare_for(CheckedPlan(find_preset("tiny", "test"), testing::plan(1, 2, 2, 8)), t, {});
  Prediction p = predict_step(step, t, {.keep_simulation = true});
  return {std::move(step), std::move(t), std::move(p)};
}

TEST(Attribution, EachOpsPartsAddUpToTheStepsFigures) {
  const AttributedRun run = attributed_run();
  const Prediction& p = run.prediction;
  ASSERT_GT(p.interference_iterations, 0);
  const Simulation& sim = *p.simulation;
  ASSERT_EQ(p.attribution.size(), sim.simulated.size());
  LinkAnalyzer analyzer(run.target.graph, run.target.achievable);
  const ProgramCosts costs(run.step.program, run.target, analyzer);
  double host_wait = 0.0;  // compute ops' hold, weighted by class: the prediction's host_wait
  double added_compute = 0.0;
  double added_comm = 0.0;
  double peers = 0.0;
  for (std::size_t i = 0; i < sim.simulated.size(); ++i) {
    const int rank = sim.simulated[i];
    for (const Op& o : ops_of(run.step.program, rank)) {
      const EventAttribution& a = p.attribution[i][o.id];
      const double took = sim.end[i][o.id] - sim.data_start[i][o.id];
      EXPECT_EQ(a.host.value(), sim.host_hold[i][o.id]);
      EXPECT_GE(a.interference.value(), 0.0);
      EXPECT_NEAR(a.interference.value(), took - costs.duration(rank, o).value(), 1e-15) << o.name;
      if (communication(o)) {
        EXPECT_EQ(a.peers.value(), sim.data_start[i][o.id] - sim.start[i][o.id]);
        EXPECT_EQ(a.latency.value(), costs.latency(rank, o).value());
        EXPECT_GT(a.latency.value(), 0.0) << o.name;
        EXPECT_LE(a.latency.value(), took) << o.name;
        added_comm += a.interference.value();
        peers += a.peers.value();
      } else {
        EXPECT_EQ(a.peers.value(), 0.0);
        EXPECT_EQ(a.latency.value(), 0.0);
        added_compute += a.interference.value();
        host_wait += a.host.value() * sim.class_size[i];
      }
    }
  }
  const auto simulated = static_cast<double>(sim.simulated.size());
  EXPECT_NEAR(added_compute / simulated, p.interference_compute.value(), 1e-12);
  EXPECT_NEAR(added_comm / simulated, p.interference_comm.value(), 1e-12);
  EXPECT_GT(added_comm, 0.0);
  EXPECT_NEAR(host_wait / run.step.program.world_size, p.host_wait.value(), 1e-12);
  EXPECT_GT(host_wait, 0.0);
  EXPECT_GT(peers, 0.0);  // the pipeline's receives wait for their sends
}

TEST(Attribution, TheFullTimelineCarriesEachRanksStandIns) {
  const AttributedRun run = attributed_run();
  const Prediction& p = run.prediction;
  const Simulation& sim = *p.simulation;
  const Timeline t = full_timeline(run.step.program, sim, &p.attribution);
  ASSERT_EQ(t.attribution.size(), t.events.size());
  EXPECT_NO_THROW(validate_timeline(run.step.program, t, "predicted"));
  for (std::size_t k = 0; k < t.events.size(); ++k) {
    const TimelineEvent& e = t.events[k];
    const auto i = static_cast<std::size_t>(sim.stand_in[static_cast<std::size_t>(e.rank)]);
    EXPECT_EQ(t.attribution[k].host.value(), p.attribution[i][e.op].host.value());
    EXPECT_EQ(t.attribution[k].peers.value(), p.attribution[i][e.op].peers.value());
    EXPECT_EQ(t.attribution[k].latency.value(), p.attribution[i][e.op].latency.value());
    EXPECT_EQ(t.attribution[k].interference.value(), p.attribution[i][e.op].interference.value());
  }
  EXPECT_TRUE(full_timeline(run.step.program, sim).attribution.empty());
  // Without keep_simulation nothing is attributed.
  EXPECT_TRUE(predict_step(run.step, run.target).attribution.empty());
}

}  // namespace
}  // namespace commscale::predict

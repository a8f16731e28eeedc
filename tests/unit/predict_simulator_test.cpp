// The event simulator: its semantics on hand-built programs, the pipeline bubble of (p - 1) / m, the
// symmetry reduction against the full simulation, and that it runs the very program the executor runs.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "parallel/program_builder.hpp"
#include "predict/op_costs.hpp"
#include "predict/prediction.hpp"
#include "predict/sim_recording.hpp"
#include "predict/simulator.hpp"
#include "predict_test_support.hpp"
#include "program/program_json.hpp"

namespace commscale::predict {
namespace {

using testing::op;
using testing::TableCosts;

// Two ranks of one tp group: compute a, all-reduce, compute b.
ProgramSet all_reduce_program() {
  ProgramSet set;
  set.world_size = 2;
  set.programs.push_back({op(0, Stream::kCompute, {}, "a", make_gemm(64, 64, 64, 1, DataType::kBFloat16)),
                          op(1, Stream::kTp, {0}, "ar", CollectiveOp{Collective::kAllReduce, 0, Bytes(64)}),
                          op(2, Stream::kCompute, {1}, "b", make_gemm(64, 64, 64, 1, DataType::kBFloat16))});
  for (int r = 0; r < 2; ++r) set.ranks.push_back(RankProgram{r, 0, {Group{GroupRole::kTp, {0, 1}}}});
  return set;
}

TEST(Simulator, CollectiveMovesDataWhenTheLastMemberArrives) {
  const ProgramSet set = all_reduce_program();
  // Rank 0 computes for 4 s, rank 1 for 2 s; the all-reduce takes 3 s once both are there; b takes 2 s.
  const TableCosts costs({{"a", 4}, {"ar", 3}, {"b", 2}}, {{{1, "a"}, 2}});
  const Simulation sim = simulate(set, costs);
  ASSERT_EQ(sim.simulated.size(), 2u);  // the two ranks cost differently: no reduction
  // Rank 1 reaches the all-reduce at 2 and waits; data moves from 4 (rank 0's arrival) to 7.
  EXPECT_DOUBLE_EQ(sim.start[1][1], 2.0);
  EXPECT_DOUBLE_EQ(sim.data_start[1][1], 4.0);
  EXPECT_DOUBLE_EQ(sim.end[1][1], 7.0);
  EXPECT_DOUBLE_EQ(sim.end[0][1], 7.0);
  EXPECT_DOUBLE_EQ(sim.end[0][2], 9.0);
  EXPECT_DOUBLE_EQ(sim.step_time.value(), 9.0);
  // The breakdown counts rank 1's wait as bubble: compute 2 + 2 = 4, exposed 3, bubble 9 - 7 = 2.
  const StepBreakdown b = simulated_breakdown(set, sim);
  EXPECT_DOUBLE_EQ(b.ranks[1].compute.value(), 4.0);
  EXPECT_DOUBLE_EQ(b.ranks[1].exposed_comm.value(), 3.0);
  EXPECT_DOUBLE_EQ(b.ranks[1].bubble.value(), 2.0);
}

TEST(Simulator, SendAndReceiveMeet) {
  ProgramSet set;
  set.world_size = 2;
  // Rank 0 computes then sends; rank 1 posts its receive at once, then computes on what arrived.
  set.programs.push_back({op(0, Stream::kCompute, {}, "work", MemoryKernel{}),
                          op(1, Stream::kPpSend, {0}, "send", PointToPoint{P2pDirection::kSend, 0, 1, Bytes(8)})});
  set.programs.push_back({op(0, Stream::kPpRecv, {}, "recv", PointToPoint{P2pDirection::kRecv, 0, 0, Bytes(8)}),
                          op(1, Stream::kCompute, {0}, "use", MemoryKernel{})});
  set.ranks = {RankProgram{0, 0, {Group{GroupRole::kPpForward, {0, 1}}}},
               RankProgram{1, 1, {Group{GroupRole::kPpForward, {0, 1}}}}};
  const TableCosts costs({{"work", 5}, {"send", 1}, {"recv", 1}, {"use", 2}});
  const Simulation sim = simulate(set, costs);
  // The receive is reached at 0, the send at 5: the transfer runs 5..6, then "use" 6..8.
  EXPECT_DOUBLE_EQ(sim.start[1][0], 0.0);
  EXPECT_DOUBLE_EQ(sim.data_start[1][0], 5.0);
  EXPECT_DOUBLE_EQ(sim.end[1][0], 6.0);
  EXPECT_DOUBLE_EQ(sim.end[0][1], 6.0);
  EXPECT_DOUBLE_EQ(sim.end[1][1], 8.0);
}

TEST(Simulator, ReportsAProgramThatCannotFinish) {
  ProgramSet set;
  set.world_size = 2;
  // A receive nobody sends.
  set.programs.push_back({op(0, Stream::kPpRecv, {}, "recv", PointToPoint{P2pDirection::kRecv, 0, 1, Bytes(8)})});
  set.programs.push_back({op(0, Stream::kCompute, {}, "idle", MemoryKernel{})});
  set.ranks = {RankProgram{0, 0, {Group{GroupRole::kPpForward, {0, 1}}}},
               RankProgram{1, 1, {Group{GroupRole::kPpForward, {0, 1}}}}};
  const TableCosts costs({{"recv", 1}, {"idle", 1}});
  EXPECT_THROW((void)simulate(set, costs), RuntimeFailure);
}

// Forward compute of one microbatch on a stage costs 1 s in all, backward 2 s; nothing else costs.
class UniformStages final : public OpCosts {
 public:
  explicit UniformStages(const ProgramSet& set) {
    for (const auto& ops : set.programs) {
      std::map<Phase, int> count;
      for (const Op& o : ops) {
        if (o.microbatch == 0 && !std::holds_alternative<CollectiveOp>(o.payload) &&
            !std::holds_alternative<PointToPoint>(o.payload)) {
          ++count[o.phase];
        }
      }
      per_op_.push_back({1.0 / count[Phase::kForward], 2.0 / count[Phase::kBackward]});
    }
    for (const RankProgram& r : set.ranks) program_.push_back(r.program);
  }
  [[nodiscard]] Seconds duration(int rank, const Op& o) const override {
    if (std::holds_alternative<CollectiveOp>(o.payload) || std::holds_alternative<PointToPoint>(o.payload)) return {};
    const auto& [fwd, bwd] = per_op_[static_cast<std::size_t>(program_[static_cast<std::size_t>(rank)])];
    if (o.phase == Phase::kForward) return Seconds(fwd);
    if (o.phase == Phase::kBackward) return Seconds(bwd);
    return {};
  }
  [[nodiscard]] std::uint64_t signature(int) const override { return 0; }

 private:
  std::vector<std::pair<double, double>> per_op_;
  std::vector<int> program_;
};

TEST(Simulator, PipelineBubbleIsPMinusOneOverM) {
  // A bare stack of 8 layers on p = 4 stages, m = 8 microbatches, t_f = 1 s and t_b = 2 s per stage and
  // microbatch, free communication. 1F1B and GPipe both take (m + p - 1)(t_f + t_b) = 11 x 3 = 33 s;
  // each rank computes m (t_f + t_b) = 24 s and idles (p - 1)(t_f + t_b) = 9 s: bubble / compute =
  // 9 / 24 = (p - 1) / m.
  TransformerConfig m = find_preset("tiny", "test");
  m.vocab = 0;
  for (const ScheduleKind kind : {ScheduleKind::k1F1B, ScheduleKind::kGpipe}) {
    ParallelPlan p = testing::plan(1, 1, 4, 8);
    p.schedule = kind;
    const ProgramSet set = build_program(CheckedPlan(m, p));
    const UniformStages costs(set);
    const Simulation sim = simulate(set, costs);
    const StepBreakdown b = simulated_breakdown(set, sim);
    EXPECT_NEAR(b.step_time.value(), 33.0, 1e-9) << name(kind);
    EXPECT_NEAR(b.compute.value(), 24.0, 1e-9) << name(kind);
    EXPECT_NEAR(b.bubble.value() / b.compute.value(), 3.0 / 8.0, 1e-9) << name(kind);
  }
  // Interleaved with v = 2 chunks: the bubble shrinks by v, to (p - 1) / (v m) of the compute.
  ParallelPlan p = testing::plan(1, 1, 4, 8);
  p.schedule = ScheduleKind::kInterleaved;
  p.chunks = 2;
  const ProgramSet set = build_program(CheckedPlan(m, p));
  const UniformStages costs(set);
  const StepBreakdown b = simulated_breakdown(set, simulate(set, costs));
  EXPECT_NEAR(b.bubble.value() / b.compute.value(), 3.0 / 16.0, 1e-9);
}

struct SymmetryCase {
  std::string cluster;
  std::string model;
  ParallelPlan plan;
};

std::vector<SymmetryCase> symmetry_cases() {
  std::vector<SymmetryCase> cases;
  auto add = [&](std::string cluster, std::string model, ParallelPlan p) { cases.push_back({cluster, model, p}); };
  add("hgx-a100", "tiny", testing::plan(2, 2, 2, 16));
  ParallelPlan interleaved = testing::plan(1, 2, 4, 16);
  interleaved.schedule = ScheduleKind::kInterleaved;
  interleaved.chunks = 2;
  interleaved.sequence_parallel = true;
  add("hgx-a100", "tiny", interleaved);
  ParallelPlan zero3 = testing::plan(4, 2, 1, 8);
  zero3.zero_stage = 3;
  zero3.recompute = Recompute::kFull;
  add("rtx4090-8x-pcie", "tiny", zero3);
  ParallelPlan zero1 = testing::plan(2, 2, 1, 8);
  zero1.zero_stage = 1;
  add("rtx3090-4x-nvlink-pairs", "tiny", zero1);
  // DGX-1's hybrid cube mesh gives tp pairs different links: more classes than stages.
  add("dgx1-v100", "tiny", testing::plan(2, 2, 2, 16));
  return cases;
}

// A case's step program and its costs on the case's cluster.
struct Costed {
  explicit Costed(const SymmetryCase& c)
      : target(testing::target(c.cluster)),
        set(build_program(CheckedPlan(find_preset(c.model, "test"), c.plan))),
        analyzer(target.graph, target.achievable),
        costs(set, target, analyzer) {}
  Target target;
  ProgramSet set;
  LinkAnalyzer analyzer;
  ProgramCosts costs;
};

TEST(Simulator, SymmetryReductionEqualsTheFullSimulation) {
  for (const SymmetryCase& c : symmetry_cases()) {
    SCOPED_TRACE(c.cluster);
    const Costed k(c);
    const ProgramSet& set = k.set;
    const ProgramCosts& costs = k.costs;
    const Simulation reduced = simulate(set, costs, {true});
    const Simulation full = simulate(set, costs, {false});
    EXPECT_LT(reduced.simulated.size(), full.simulated.size());
    const Timeline a = full_timeline(set, reduced);
    const Timeline b = full_timeline(set, full);
    ASSERT_EQ(a.events.size(), b.events.size());
    for (std::size_t i = 0; i < a.events.size(); ++i) {
      ASSERT_EQ(a.events[i].start.value(), b.events[i].start.value()) << i;
      ASSERT_EQ(a.events[i].end.value(), b.events[i].end.value()) << i;
    }
    const StepBreakdown weighted = simulated_breakdown(set, reduced);
    const StepBreakdown direct = break_down_step(set, b, 0);
    EXPECT_NEAR(weighted.compute.value(), direct.compute.value(), 1e-12);
    EXPECT_NEAR(weighted.exposed_comm.value(), direct.exposed_comm.value(), 1e-12);
    EXPECT_NEAR(weighted.bubble.value(), direct.bubble.value(), 1e-12);
    for (const auto& [group, time] : direct.groups) {
      EXPECT_NEAR(weighted.groups.at(group).exposed.value(), time.exposed.value(), 1e-12) << group;
    }
  }
}

// A search runs thousands of simulations with one SimStorage and each program's indexes built once:
// a run that reuses them (after a run of another program, larger and of other groups) gives exactly
// what a fresh run gives, and indexes of another program set are refused.
TEST(Simulator, ReusedStorageAndIndexesGiveTheFreshResult) {
  const Target t = testing::target("hgx-a100");
  LinkAnalyzer analyzer(t.graph, t.achievable);
  const TransformerConfig m = find_preset("tiny", "test");
  ParallelPlan big = testing::plan(2, 2, 2, 16);
  big.zero_stage = 1;
  const ProgramSet first = build_program(CheckedPlan(m, big));
  const ProgramSet second = build_program(CheckedPlan(m, testing::plan(1, 2, 4, 8)));
  const ProgramCosts first_costs(first, t, analyzer);
  const ProgramCosts second_costs(second, t, analyzer);
  SimStorage storage;
  Simulation reused;
  const std::vector<ProgramIndex> first_indexes = index_programs(first);
  const std::vector<ProgramIndex> second_indexes = index_programs(second);
  for (const bool reduce : {true, false}) {
    simulate(first, first_costs, {.reduce = reduce, .indexes = &first_indexes, .storage = &storage}, reused);
    simulate(second, second_costs, {.reduce = reduce, .indexes = &second_indexes, .storage = &storage}, reused);
    const Simulation fresh = simulate(second, second_costs, {.reduce = reduce});
    EXPECT_EQ(reused.simulated, fresh.simulated);
    EXPECT_EQ(reused.stand_in, fresh.stand_in);
    EXPECT_EQ(reused.class_size, fresh.class_size);
    EXPECT_EQ(reused.step_time.value(), fresh.step_time.value());
    ASSERT_EQ(reused.end.size(), fresh.end.size());
    for (std::size_t i = 0; i < fresh.end.size(); ++i) {
      EXPECT_EQ(reused.start[i], fresh.start[i]) << i;
      EXPECT_EQ(reused.end[i], fresh.end[i]) << i;
      EXPECT_EQ(reused.data_start[i], fresh.data_start[i]) << i;
    }
  }
  EXPECT_THROW(simulate(second, second_costs, {.indexes = &first_indexes}, reused), RuntimeFailure);
}

// A search simulates one coarse program under many plans' durations: the first run records the engine's
// order of work, the later ones replay it (SimRecording). A replay under other durations gives what the
// engine gives under them, to the bit: every time of every op, the host's, and the step, with and without
// the symmetry reduction and the host's synchronisation.
TEST(Simulator, AReplayedRunIsTheEngineRunToTheBit) {
  HostCosts host;
  for (auto& phase : host.issue) phase.fill(Seconds(7e-6));
  host.step = Seconds(2e-3);
  for (const SymmetryCase& c : symmetry_cases()) {
    SCOPED_TRACE(c.cluster);
    const Costed k(c);
    const ProgramSet& set = k.set;
    const ProgramCosts& costs = k.costs;
    for (const HostSync sync : {HostSync::kNone, HostSync::kBeforeOptimizer}) {
      for (const bool after_p2p : {false, true}) {
        // Megatron does not wait after the interleaved schedule's transfers (prediction.cpp), whose warm-up
        // would deadlock if it did.
        if (after_p2p && c.plan.schedule == ScheduleKind::kInterleaved) continue;
        host.sync = sync;
        host.sync_after_p2p = after_p2p;
        for (const bool reduce : {true, false}) {
          SimRecording recording;
          const SimulationOptions options{.reduce = reduce, .host = &host, .recording = &recording};
          Simulation recorded;
          simulate(set, costs, options, recorded);
          // Other durations, op by op: up to 3x longer, a few ops shorter.
          std::vector<std::vector<double>> seconds(recorded.simulated.size());
          for (std::size_t i = 0; i < seconds.size(); ++i) {
            for (const Op& o : ops_of(set, recorded.simulated[i])) {
              const double factor = 0.5 + static_cast<double>((o.id * 7919 + i * 104729) % 251) / 100.0;
              seconds[i].push_back(costs.duration(recorded.simulated[i], o).value() * factor);
            }
          }
          const TabledCosts other(recorded.stand_in, std::move(seconds));
          Simulation replayed = recorded;
          simulate(set, other, options, replayed);
          ASSERT_TRUE(recording.impl().serves(replayed, &host));
          const Simulation engine = simulate(set, other, {.reduce = reduce, .host = &host});
          EXPECT_NE(engine.step_time.value(), recorded.step_time.value());
          EXPECT_EQ(replayed.simulated, engine.simulated);
          EXPECT_EQ(replayed.step_time.value(), engine.step_time.value());
          EXPECT_EQ(replayed.start, engine.start);
          EXPECT_EQ(replayed.end, engine.end);
          EXPECT_EQ(replayed.data_start, engine.data_start);
          EXPECT_EQ(replayed.issued, engine.issued);
          EXPECT_EQ(replayed.host_hold, engine.host_hold);
          EXPECT_EQ(replayed.host_wait, engine.host_wait);
        }
      }
    }
  }
}

TEST(Simulator, DifferentLinksMakeDifferentClasses) {
  // On DGX-1 the tp pairs of one stage do not all have the same NVLink bundle, so some ranks of a stage
  // fall in different classes; on HGX A100 they do not.
  const auto classes = [](const std::string& cluster) {
    const Target t = testing::target(cluster);
    const ProgramSet set = build_program(CheckedPlan(find_preset("tiny", "test"), testing::plan(2, 2, 2, 16)));
    LinkAnalyzer analyzer(t.graph, t.achievable);
    const ProgramCosts costs(set, t, analyzer);
    return simulate(set, costs).simulated.size();
  };
  EXPECT_EQ(classes("hgx-a100"), 2u);
  EXPECT_GT(classes("dgx1-v100"), 2u);
}

TEST(Simulator, RunsTheProgramTheExecutorRuns) {
  // The executor (runtime/executor.cpp) runs build_program(CheckedPlan(model, plan)); the predictor simulates the
  // same call's result, and a program written out (plan --dump-program) and read back is the same
  // program: the timeline predicted for one validates against the other, and predicting from the
  // read-back program gives the same times. tests/cli/predict.cmake checks the executor's own timeline
  // (train --timeline, CPU backend) against the predictor's program with diff-trace.
  const TransformerConfig m = find_preset("tiny", "test");
  ParallelPlan p = testing::plan(2, 2, 2, 16);
  p.zero_stage = 1;
  const ProgramSet built = build_program(CheckedPlan(m, p));
  const ProgramSet read = nlohmann::json(built).get<ProgramSet>();
  const Target t = testing::target("hgx-a100");
  LinkAnalyzer analyzer(t.graph, t.achievable);
  const ProgramCosts built_costs(built, t, analyzer);
  const ProgramCosts read_costs(read, t, analyzer);
  const Timeline a = full_timeline(built, simulate(built, built_costs));
  const Timeline b = full_timeline(read, simulate(read, read_costs));
  EXPECT_EQ(a.engine, "predictor");
  validate_timeline(read, a, "predicted");
  validate_timeline(built, b, "predicted from JSON");
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) EXPECT_EQ(a.events[i].end.value(), b.events[i].end.value());
}

}  // namespace
}  // namespace commscale::predict

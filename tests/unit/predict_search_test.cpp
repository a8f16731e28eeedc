// The plan search (search.hpp), the cost per token (economics.hpp) and timeline differences
// (program/timeline_diff.hpp), on cases that can be checked by hand.
#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "parallel/program_builder.hpp"
#include "predict/economics.hpp"
#include "predict/prediction.hpp"
#include "predict/search.hpp"
#include "predict_test_support.hpp"
#include "program/timeline_diff.hpp"

namespace commscale::predict {
namespace {

TEST(Search, EnumeratesEachValidPlanOnce) {
  // tiny: 8 layers, 8 heads, 4 KV heads. On 4 GPUs with a global batch of 8: tp in {1, 2, 4}, pp in
  // the divisors of 4 / tp, dp the rest; ZeRO only with dp > 1, sp only with tp > 1, interleaving only
  // where the layers split into pp x v chunks and the microbatches into multiples of pp.
  const TransformerConfig m = find_preset("tiny", "test");
  SearchOptions o;
  o.global_batch = 8;
  const std::vector<ParallelPlan> plans = enumerate_plans(m, 4, o);
  ASSERT_FALSE(plans.empty());
  std::set<std::string> seen;
  for (const ParallelPlan& p : plans) {
    EXPECT_EQ(world_size(p), 4);
    EXPECT_NO_THROW(validate_plan(m, p, 4)) << describe_plan(p);
    EXPECT_TRUE(seen.insert(describe_plan(p)).second) << "twice: " << describe_plan(p);
    if (p.dp == 1) {
      EXPECT_EQ(p.zero_stage, 0);
    }
    if (p.tp == 1) {
      EXPECT_FALSE(p.sequence_parallel);
    }
    if (p.chunks > 1) {
      EXPECT_EQ(m.layers % (p.pp * p.chunks), 0);
    }
  }
  // Layouts: (tp, pp) in (1,1) (1,2) (1,4) (2,1) (2,2) (4,1): six.
  std::set<std::pair<int, int>> layouts;
  for (const ParallelPlan& p : plans) layouts.insert({p.tp, p.pp});
  EXPECT_EQ(layouts.size(), 6u);
  // One plan by hand: dp 2, tp 2, micro-batch 4 (1 microbatch per replica), ZeRO 1, full recompute, sp.
  EXPECT_TRUE(seen.count("dp 2 tp 2 pp 1 1f1b mb 4 zero 1 recompute full sp"));
  EXPECT_THROW((void)enumerate_plans(m, 4, SearchOptions{}), commscale::InputError);  // global batch 0
}

TEST(Search, NamesTheNearestBatchesThatUseEveryGpu) {
  // llama2-7b: 32 layers, 32 heads, 32 KV heads, MLP 11008. On 6 GPUs tp and pp divide 6 and the model:
  // 1 or 2 each, and tp x pp = 4 does not divide 6, so dp is 6 / 1 = 6 or 6 / 2 = 3. A batch of 256 is
  // a multiple of neither: no plan. Nearest: 255 = 85 x 3 below; 258 = 86 x 3 = 43 x 6 above.
  const TransformerConfig m = find_preset("llama2-7b", "test");
  SearchOptions o;
  o.global_batch = 256;
  EXPECT_TRUE(enumerate_plans(m, 6, o).empty());
  EXPECT_EQ(batch_hint(m, 6, o), "the nearest global batches that use all 6 GPUs: 255 (dp 3) or 258 (dp 3, 6) "
                                 "(--global-batch)");
  // A batch of 2 has nothing below: 3 (dp 3) is the nearest above.
  o.global_batch = 2;
  EXPECT_EQ(batch_hint(m, 6, o), "the nearest global batches that use all 6 GPUs: 3 (dp 3) (--global-batch)");
  // gpt3-1.3b (24 layers, 16 heads) on 6 GPUs: pp may be 3 or 6, so dp 1, 2, 3 or 6. A batch of 64 takes
  // dp 2 (x pp 3) or 1, not 6: 60 = 10 x 6 or 66 = 11 x 6 would; 66 itself is quiet.
  const TransformerConfig gpt = find_preset("gpt3-1.3b", "test");
  o.global_batch = 64;
  EXPECT_EQ(largest_dp_hint(gpt, 6, o),
            "global batch 64 does not split over dp 6, the most data parallelism 6 GPUs give this model: its plans "
            "take more tensor or pipeline parallelism instead; 60 or 66 would (--global-batch)");
  o.global_batch = 66;
  EXPECT_EQ(largest_dp_hint(gpt, 6, o), "");
}

// GPT-3 1.3B on one HGX A100 node: a search small enough for a unit test, run with an evaluator of its own.
struct SmallSearch {
  Target target = testing::target("hgx-a100");
  TransformerConfig model = find_preset("gpt3-1.3b", "test");
  SearchOptions options;
  SmallSearch(int global_batch, int max_micro_batch, int top = 10) {
    options.global_batch = global_batch;
    options.max_micro_batch = max_micro_batch;
    options.top = top;
  }
  [[nodiscard]] SearchResult run() const {
    PlanEvaluator evaluator(model, target, options.memory);
    return search_plans({&evaluator}, options);
  }
};

TEST(Search, RanksByThroughputAndSaysWhyTheOthersLose) {
  const SmallSearch search(32, 2);
  const TransformerConfig& m = search.model;
  const SearchResult r = search.run();
  EXPECT_EQ(r.candidates, r.fitting + r.not_fitting.size());
  ASSERT_GT(r.ranked.size(), 1u);
  for (std::size_t i = 1; i < r.ranked.size(); ++i) {
    EXPECT_GE(r.ranked[i - 1].estimate.tokens_per_s, r.ranked[i].estimate.tokens_per_s);
    EXPECT_FALSE(r.ranked[i].reason.empty());
  }
  std::size_t counted = 0;
  for (const auto& [reason, n] : r.reasons) counted += n;
  EXPECT_EQ(counted, r.candidates - 1);  // every plan but the best has a reason
  // Tokens/s is the global batch's tokens over the step.
  const PlanEstimate& best = r.ranked.front().estimate;
  EXPECT_NEAR(best.tokens_per_s, 32.0 * m.seq / best.step_time.value(), 1e-9 * best.tokens_per_s);
}

TEST(Search, FindsTheSamePlansOnAnyNumberOfThreads) {
  // Each thread estimates whole layouts with an evaluator of its own; an estimate depends only on its
  // plan, so one thread and three give the same ranking, to the last bit of every step time.
  SmallSearch search(32, 4, 1000);
  const auto ranking = [&](int threads) {
    search.options.threads = threads;
    std::vector<std::pair<std::string, double>> out;
    for (const RankedPlan& r : search.run().ranked) {
      out.emplace_back(describe_plan(r.estimate.plan), r.estimate.step_time.value());
    }
    return out;
  };
  const auto one = ranking(1);
  ASSERT_GT(one.size(), 10u);
  EXPECT_EQ(one, ranking(3));
}

// A search simulates only the plans whose compute bound could place them in its top K or within 1% of the best
// (search.hpp): listing 3 gives the 3 plans, step times to the bit, that simulating every plan gives; every plan it
// left out is bounded above the 3rd best step, and the simulation would have given it at least its bound.
TEST(Search, ListsWhatSimulatingEveryPlanWouldList) {
  const SearchResult every = SmallSearch(64, 4, 100000).run();
  EXPECT_TRUE(every.bounded_out.empty());
  const SearchResult r = SmallSearch(64, 4, 3).run();
  ASSERT_GT(r.bounded_out.size(), every.ranked.size() / 2);  // most plans left out: the test tests something
  EXPECT_EQ(r.fitting, every.fitting);
  EXPECT_EQ(r.ranked.size() + r.bounded_out.size(), every.ranked.size());
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(describe_plan(r.ranked[i].estimate.plan), describe_plan(every.ranked[i].estimate.plan));
    EXPECT_EQ(r.ranked[i].estimate.step_time.value(), every.ranked[i].estimate.step_time.value());
  }
  const double third = every.ranked[2].estimate.step_time.value();
  EXPECT_EQ(r.reasons.count("within 1% of the best") ? r.reasons.at("within 1% of the best") : 0,
            every.reasons.count("within 1% of the best") ? every.reasons.at("within 1% of the best") : 0);
  EXPECT_EQ(r.reasons.at(std::string(kBoundedOut)), r.bounded_out.size());
  std::map<std::string, double> step;
  for (const RankedPlan& p : every.ranked) step[describe_plan(p.estimate.plan)] = p.estimate.step_time.value();
  for (const BoundedPlan& b : r.bounded_out) {
    SCOPED_TRACE(describe_plan(b.memory.plan));
    EXPECT_GT(b.bound, r.bound_limit);
    EXPECT_GE(r.bound_limit.value(), third);
    EXPECT_GE(step.at(describe_plan(b.memory.plan)), b.bound.value());
  }
}

TEST(Economics, CostPerMillionTokensByHand) {
  // 8 RTX 4090 at a given 24,000 USD per node over 3 years, 450 W each plus the host rule's 960 W (2 sockets
  // x 300 W, no NICs, 10% of 3,600 W) at 0.15 USD/kWh:
  //   24000 / (3 x 8766) = 0.912617 USD/h, 8 x 450 + 960 = 4.56 kW x 0.15 = 0.684 USD/h: 1.596617 USD/h.
  // At 10,000 tokens/s: 1.596617 / 3.6e7 x 1e6 = 0.0443505 USD per million tokens; 4560 W / 10,000 =
  // 0.456 J per token.
  const hw::ClusterSpec& cluster = hw::testing::catalog().cluster("rtx4090-8x-pcie", "test");
  CostAssumptions a;
  a.basis = CostBasis::kSystem;
  a.node_price_usd = 24000.0;
  const ClusterCost c = cluster_cost(cluster, 8, a);
  ASSERT_TRUE(c.priced);
  ASSERT_DOUBLE_EQ(c.power_w, 8 * 450.0 + 960.0);
  EXPECT_NEAR(c.usd_per_hour, 24000.0 / (3 * 8766.0) + 0.684, 1e-12);
  EXPECT_NEAR(*usd_per_million_tokens(c, 10000.0), (24000.0 / (3 * 8766.0) + 0.684) / 36.0, 1e-12);
  EXPECT_NEAR(*joules_per_token(c, 10000.0), 0.456, 1e-12);
  // Half the node pays half its price, and half its host.
  EXPECT_NEAR(cluster_cost(cluster, 4, a).price_usd, 12000.0, 1e-9);
  EXPECT_NEAR(cluster_cost(cluster, 4, a).power_w, 4 * 450.0 + 480.0, 1e-9);
}

TEST(Economics, EveryClusterOnOneBasisOrNone) {
  const hw::ClusterSpec& a100 = hw::testing::catalog().cluster("hgx-a100", "test");
  const hw::ClusterSpec& rtx = hw::testing::catalog().cluster("rtx4090-8x-pcie", "test");
  // The default basis is cloud rental, the one every catalog GPU has.
  EXPECT_EQ(CostAssumptions{}.basis, CostBasis::kCloud);
  CostAssumptions system;
  system.basis = CostBasis::kSystem;
  // Whole systems, every node from its parts by one rule: 8 x 9,000 USD A100s + host 25,000 + 8 NICs x
  // (700 + 500) = 106,600 USD; 8 x 1,800 USD RTX 4090s + host 12,000 = 26,400 USD (no NICs in one box).
  const ClusterCost node = cluster_cost(a100, 8, system);
  ASSERT_TRUE(node.priced);
  EXPECT_DOUBLE_EQ(node.price_usd, 8 * 9000.0 + 25000.0 + 8 * (700.0 + 500.0));
  // Power by the one host rule: 8 x 400 W + 2 sockets x 300 W + 8 NICs x 25 W + 10% of 3,200 W.
  EXPECT_DOUBLE_EQ(node.power_w, 8 * 400.0 + 2 * 300.0 + 8 * 25.0 + 320.0);
  const ClusterCost box = cluster_cost(rtx, 8, system);
  ASSERT_TRUE(box.priced);
  EXPECT_DOUBLE_EQ(box.price_usd, 8 * 1800.0 + 12000.0);
  // A node whose parts lack a price falls back to its list price (the DGX A100's 199,000 USD), and with
  // neither has none on this basis (not its GPUs' prices instead), naming the missing part.
  hw::ClusterSpec hostless = a100;
  hostless.host_price_USD.reset();
  EXPECT_DOUBLE_EQ(cluster_cost(hostless, 8, system).price_usd, 199000.0);
  hostless.system_price_USD.reset();
  const ClusterCost unpriced = cluster_cost(hostless, 8, system);
  EXPECT_FALSE(unpriced.priced);
  EXPECT_NE(unpriced.price_source.find("host_price_USD"), std::string::npos) << unpriced.price_source;
  EXPECT_FALSE(usd_per_million_tokens(unpriced, 1000.0));
  // The user's prices: of one GPU (in the parts), of the entry (the GPUs used and their host, not shared).
  CostAssumptions given = system;
  given.gpu_price_usd = 1000.0;
  EXPECT_DOUBLE_EQ(cluster_cost(rtx, 8, given).price_usd, 8 * 1000.0 + 12000.0);
  given.entry_price_usd = 5000.0;
  EXPECT_DOUBLE_EQ(cluster_cost(rtx, 2, given).price_usd, 5000.0);
  // GPUs only, at purchase price: 8 x 1,800 USD and 8 x 9,000 USD; none without a purchase price.
  CostAssumptions gpus;
  gpus.basis = CostBasis::kGpus;
  EXPECT_DOUBLE_EQ(cluster_cost(rtx, 8, gpus).price_usd, 8 * 1800.0);
  EXPECT_DOUBLE_EQ(cluster_cost(a100, 8, gpus).price_usd, 8 * 9000.0);
  hw::ClusterSpec unbought = a100;
  unbought.gpu.purchase_price_USD.value.reset();
  EXPECT_FALSE(cluster_cost(unbought, 8, gpus).priced);
  // Host power: a cluster file's measured host_power_W replaces the rule; --host-watts replaces both.
  hw::ClusterSpec measured = a100;
  measured.host_power_W = hw::figure(2000.0, hw::SourceTag::kUnverified, "test");
  EXPECT_DOUBLE_EQ(cluster_cost(measured, 8, system).power_w, 8 * 400.0 + 2000.0);
  CostAssumptions watts = system;
  watts.host_watts_per_node = 500.0;
  EXPECT_DOUBLE_EQ(cluster_cost(measured, 8, watts).power_w, 8 * 400.0 + 500.0);
  // Cloud: the GPU file's on-demand rate x 8, energy included; none where the GPU has no rate; the
  // user's 2.5 USD per GPU-hour x 8 = 20 USD/h replaces it.
  CostAssumptions cloud;
  cloud.basis = CostBasis::kCloud;
  const ClusterCost rented = cluster_cost(a100, 8, cloud);
  ASSERT_TRUE(rented.priced);
  EXPECT_DOUBLE_EQ(rented.usd_per_hour, 8 * *a100.gpu.rental_USD_per_gpu_hour.value);
  hw::ClusterSpec unrated = a100;
  unrated.gpu.rental_USD_per_gpu_hour.value.reset();
  EXPECT_FALSE(cluster_cost(unrated, 8, cloud).priced);
  cloud.usd_per_gpu_hour = 2.5;
  EXPECT_DOUBLE_EQ(cluster_cost(a100, 8, cloud).usd_per_hour, 20.0);
}

TEST(TimelineDiff, OpKindsAndATimelineAgainstItsDoubleByHand) {
  EXPECT_EQ(op_kind("mb3.c1.L7.bwd.mlp.fc1.dgrad"), "L*.bwd.mlp.fc1.dgrad");
  // The predicted timeline of a plan, against the same with every time doubled: every duration and the
  // step double, so B - A = A and B / A - 1 = 100% everywhere.
  const TransformerConfig m = find_preset("tiny", "test");
  const ParallelPlan p = testing::plan(1, 2, 1, 2);
  const Target t = testing::target("h200x2");
  PredictOptions options;
  options.keep_simulation = true;
  const PreparedStep step = prepare_for(CheckedPlan(m, p), t, {});
  const Prediction pr = predict_step(step, t, options);
  const Timeline a = full_timeline(step.program, *pr.simulation);
  Timeline b = a;
  b.engine = "doubled";
  for (TimelineEvent& e : b.events) {
    e.start = e.start * 2.0;
    e.end = e.end * 2.0;
  }
  const TimelineDiff d = diff_timelines(step.program, a, b, "a", "b", 5);
  EXPECT_NEAR(d.step_time.a_s, pr.summary.step_time_s, 1e-12);
  EXPECT_NEAR(d.step_time.relative(), 1.0, 1e-9);
  EXPECT_NEAR(d.compute.relative(), 1.0, 1e-9);
  ASSERT_FALSE(d.streams.empty());
  for (const TimeComparison& s : d.streams) {
    if (s.a_s > 0) {
      EXPECT_NEAR(s.relative(), 1.0, 1e-9) << s.key;
    }
  }
  EXPECT_LE(d.ops.size(), 5u);
  // A timeline of another program is refused, naming it.
  const ProgramSet other = build_program(CheckedPlan(m, testing::plan(2, 1, 1, 2)));
  EXPECT_THROW((void)diff_timelines(other, a, b, "a", "b"), commscale::InputError);
}

}  // namespace
}  // namespace commscale::predict

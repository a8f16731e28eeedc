// Context parallelism (src/workload/CONTEXT_PARALLEL.md): the rank layout against Megatron-Core's RankGenerator
// (groups printed by its generate_masked_orthogonal_rank_groups, written out here), the step program's key-value
// exchanges counted by hand for p2p and all_gather, attention FLOPs summed over the cp ranks equal to those
// without context parallelism, gradients over dp x cp, memory, and the plans refused with their flag.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/json_at.hpp"
#include "input_error_matcher.hpp"
#include "parallel/plan_memory.hpp"
#include "parallel/plan_summary.hpp"
#include "parallel/program_builder.hpp"
#include "parallel/rank_layout.hpp"
#include "program/checker.hpp"
#include "traffic_test_support.hpp"
#include "workload/memory.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;

using Groups = std::vector<std::vector<int>>;

// Every group of the layout along `dims`, each once, in the order of its first member.
Groups all_groups(const RankLayout& layout, std::vector<ParallelDim> dims) {
  Groups out;
  std::vector<bool> seen(static_cast<std::size_t>(layout.world_size()), false);
  for (int r = 0; r < layout.world_size(); ++r) {
    if (seen[static_cast<std::size_t>(r)]) continue;
    const std::vector<int> g = dims.size() == 1 ? layout.group(r, dims[0]) : layout.group(r, dims[0], dims[1]);
    for (int member : g) seen[static_cast<std::size_t>(member)] = true;
    out.push_back(g);
  }
  return out;
}

TEST(ContextParallel, RankLayoutAsMegatronCoreLaysItOut) {
  // RankGenerator(tp=2, ep=1, dp=2, pp=2, cp=2, order="tp-cp-ep-dp-pp").get_ranks(...): Megatron-Core's default.
  for (const char* order : {"tp-cp-dp-pp", "tp-dp-pp"}) {  // an order without cp places it after tp
    const RankLayout l(2, 2, 2, order, 2);
    EXPECT_EQ(l.world_size(), 16);
    EXPECT_EQ(all_groups(l, {ParallelDim::kTp}),
              (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
    EXPECT_EQ(all_groups(l, {ParallelDim::kCp}),
              (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
    EXPECT_EQ(all_groups(l, {ParallelDim::kDp}),
              (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}}));
    EXPECT_EQ(all_groups(l, {ParallelDim::kDp, ParallelDim::kCp}),
              (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}}));
    EXPECT_EQ(all_groups(l, {ParallelDim::kPp}),
              (Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}}));
  }
  // order "tp-dp-pp-cp" (cp slowest, as Megatron-Core appends a dimension its order leaves out).
  const RankLayout last(2, 2, 2, "tp-dp-pp-cp", 2);
  EXPECT_EQ(all_groups(last, {ParallelDim::kCp}),
            (Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}}));
  EXPECT_EQ(all_groups(last, {ParallelDim::kDp, ParallelDim::kCp}),
            (Groups{{0, 2, 8, 10}, {1, 3, 9, 11}, {4, 6, 12, 14}, {5, 7, 13, 15}}));
  EXPECT_EQ(all_groups(last, {ParallelDim::kPp}),
            (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}}));
  // order "cp-tp-dp-pp".
  const RankLayout first(2, 2, 2, "cp-tp-dp-pp", 2);
  EXPECT_EQ(all_groups(first, {ParallelDim::kTp}),
            (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
  EXPECT_EQ(all_groups(first, {ParallelDim::kDp, ParallelDim::kCp}),
            (Groups{{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}}));
  // With cp 1 every order is the three-dimensional layout.
  const RankLayout plain(2, 2, 2, "tp-pp-dp", 1);
  const RankLayout named(2, 2, 2, "tp-cp-pp-dp", 1);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(plain.coords(r), named.coords(r));
    EXPECT_EQ(plain.group(r, ParallelDim::kDp), named.group(r, ParallelDim::kDp));
  }
  EXPECT_TRUE(throws_input_error([] { (void)RankLayout(2, 2, 2, "tp-cp-dp-cp", 2); }, {"--order", "names cp twice"}));
}

ParallelPlan cp_plan(int cp, int dp, CpCommType comm, int microbatches = 2) {
  ParallelPlan p;
  p.cp = cp;
  p.dp = dp;
  p.cp_comm = comm;
  p.flash_attention = true;
  p.global_batch = dp * microbatches;
  p.bucket_bytes = Bytes(1 << 30);  // one gradient bucket
  return p;
}

TransformerConfig long_tiny() {
  TransformerConfig m = find_preset("tiny", "");  // 8 layers, h 128, 8 heads of 16, 4 KV heads
  m.seq = 1024;
  return m;
}

using commscale::testing::traffic;

TEST(ContextParallel, RingExchangesCountedByHand) {
  const TransformerConfig m = long_tiny();
  for (const int cp : {2, 4}) {
    const ProgramSet set = build_program(CheckedPlan(m, cp_plan(cp, 2, CpCommType::kP2p)));
    const ProgramCheck check = check_program(set);
    ASSERT_TRUE(check.ok()) << check.problems.front();
    ASSERT_EQ(set.world_size, 2 * cp);
    // Rank 1 (cp 1, dp 0 with tp 1): its cp group is ranks 0 .. cp-1, its gradients go over all dp x cp ranks.
    const RankProgram& r1 = set.ranks[1];
    ASSERT_EQ(r1.groups.size(), 8u);
    EXPECT_EQ(r1.groups[kContextGroup].role, GroupRole::kContext);
    std::vector<int> ring(static_cast<std::size_t>(cp));
    for (int i = 0; i < cp; ++i) ring[static_cast<std::size_t>(i)] = i;
    EXPECT_EQ(r1.groups[kContextGroup].members, ring);
    EXPECT_EQ(r1.groups[kDpGroup].members.size(), static_cast<std::size_t>(2 * cp));
    // A KV block: T / cp tokens x 2 x 4 KV heads x 16 x 2 bytes. Forward: cp - 1 exchanges of a block; backward:
    // cp exchanges carrying KV (first), KV and dKV (middle), dKV (last): 2 (cp - 1) blocks. 8 layers, 2
    // microbatches.
    const std::uint64_t block = 1024 / static_cast<std::uint64_t>(cp) * 2 * 4 * 16 * 2;
    const auto ucp = static_cast<std::uint64_t>(cp);
    auto t = traffic(set, 1);
    EXPECT_EQ(t["cp sendrecv"].count, 8u * 2 * (ucp - 1 + ucp));
    EXPECT_EQ(t["cp sendrecv"].bytes.count(), 8u * 2 * (ucp - 1 + 2 * (ucp - 1)) * block);
    EXPECT_EQ(t.count("cp all_gather"), 0u);
  }
}

TEST(ContextParallel, AllGatherExchangesCountedByHand) {
  const TransformerConfig m = long_tiny();
  const ProgramSet set = build_program(CheckedPlan(m, cp_plan(2, 1, CpCommType::kAllGather)));
  const ProgramCheck check = check_program(set);
  ASSERT_TRUE(check.ok()) << check.problems.front();
  // K and V gathered once each forward and again backward, dK and dV reduce-scattered: the whole sequence's
  // K (or V) each, 1024 x 4 x 16 x 2 bytes.
  const std::uint64_t whole = 1024u * 4 * 16 * 2;
  auto t = traffic(set, 0);
  EXPECT_EQ(t["cp all_gather"].count, 8u * 2 * 4);
  EXPECT_EQ(t["cp all_gather"].bytes.count(), 8u * 2 * 4 * whole);
  EXPECT_EQ(t["cp reduce_scatter"].count, 8u * 2 * 2);
  EXPECT_EQ(t["cp reduce_scatter"].bytes.count(), 8u * 2 * 2 * whole);
  EXPECT_EQ(t.count("cp sendrecv"), 0u);
}

TEST(ContextParallel, FlopsOverTheRanksEqualThoseWithoutIt) {
  const TransformerConfig m = long_tiny();
  const ParallelPlan one = cp_plan(1, 1, CpCommType::kP2p);
  const PlanSummary base = summarize_plan(m, one, build_program(CheckedPlan(m, one)), {}, std::nullopt);
  for (const CpCommType comm : {CpCommType::kP2p, CpCommType::kAllGather}) {
    for (const int cp : {2, 4}) {
      const ParallelPlan p = cp_plan(cp, 1, comm);
      const PlanSummary s = summarize_plan(m, p, build_program(CheckedPlan(m, p)), {}, std::nullopt);
      // Every GEMM runs on T / cp rows, and the attention blocks' keys sum to the causal share: exact.
      EXPECT_DOUBLE_EQ(s.hardware_flops_per_step.value(), base.hardware_flops_per_step.value())
          << "cp " << cp << " " << name(comm);
      EXPECT_DOUBLE_EQ(s.model_flops_per_step.value(), base.model_flops_per_step.value());
    }
  }
}

TEST(ContextParallel, GradientsReduceOverDataAndContextRanks) {
  // The same model reduces the same gradients over dp x cp ranks as over dp ranks without context parallelism.
  const TransformerConfig m = long_tiny();
  const ParallelPlan with_cp = cp_plan(2, 2, CpCommType::kP2p);
  ParallelPlan without = cp_plan(1, 4, CpCommType::kP2p);
  without.global_batch = with_cp.global_batch * 2;
  auto a = traffic(build_program(CheckedPlan(m, with_cp)), 0);
  auto b = traffic(build_program(CheckedPlan(m, without)), 0);
  EXPECT_EQ(a["dp all_reduce"].count, b["dp all_reduce"].count);
  EXPECT_EQ(a["dp all_reduce"].bytes, b["dp all_reduce"].bytes);
  // ZeRO 1 shards the optimizer over dp x cp: the same states per rank as dp 4.
  ParallelPlan z_cp = with_cp;
  z_cp.zero_stage = 1;
  ParallelPlan z_dp = without;
  z_dp.zero_stage = 1;
  EXPECT_EQ(memory_per_stage(m, z_cp, {})[0].bytes.optimizer, memory_per_stage(m, z_dp, {})[0].bytes.optimizer);
}

// FP8's delayed scaling reduces its amaxes over Megatron's amax group, tp x dp x cp: with context parallelism and
// no data parallelism still over the data-parallel group, which is then the cp ranks.
TEST(ContextParallel, Fp8AmaxesReduceOverDataAndContextRanks) {
  const TransformerConfig m = long_tiny();
  ParallelPlan p = cp_plan(2, 1, CpCommType::kP2p);
  p.fp8 = Fp8Recipe::kDelayed;
  const ProgramSet set = build_program(CheckedPlan(m, p));
  ASSERT_TRUE(check_program(set).ok());
  int amax = 0;
  for (const Op& op : ops_of(set, 0)) {
    if (op.name.find("fp8_amax.dp.all_reduce") == std::string::npos) continue;
    ++amax;
    EXPECT_EQ(set.ranks[0].groups[std::get<CollectiveOp>(op.payload).group].members, (std::vector<int>{0, 1}));
  }
  EXPECT_EQ(amax, 2 * 2);  // a forward's and a backward's per microbatch
}

TEST(ContextParallel, ActivationsDivideByCpBesideTheKeyValueBuffers) {
  const TransformerConfig m = long_tiny();
  const ParallelPlan one = cp_plan(1, 1, CpCommType::kP2p);
  const ParallelPlan two = cp_plan(2, 1, CpCommType::kP2p);
  EXPECT_EQ(layer_activation_bytes(m, layer_sharding(two)).count() * 2,
            layer_activation_bytes(m, layer_sharding(one)).count());
  EXPECT_EQ(memory_per_stage(m, two, {})[0].bytes.activations.count() * 2,
            memory_per_stage(m, one, {})[0].bytes.activations.count());
  // p2p: two buffers of a KV block and its dKV (4 blocks of 512 x 128 x 2 bytes); all_gather: the whole sequence's
  // K, V, dK and dV.
  EXPECT_EQ(memory_per_stage(m, two, {})[0].bytes.communication.count(), 4u * 512 * 128 * 2);
  EXPECT_EQ(memory_per_stage(m, cp_plan(2, 1, CpCommType::kAllGather), {})[0].bytes.communication.count(),
            4u * 512 * 128 * 2);
  EXPECT_EQ(memory_per_stage(m, cp_plan(4, 1, CpCommType::kAllGather), {})[0].bytes.communication.count(),
            8u * 256 * 128 * 2);
  EXPECT_EQ(memory_per_stage(m, one, {})[0].bytes.communication.count(), 0u);
  // Weights are replicated over cp.
  EXPECT_EQ(memory_per_stage(m, two, {})[0].bytes.weights, memory_per_stage(m, one, {})[0].bytes.weights);
}

TEST(ContextParallel, PlanJsonCarriesCpOnlyWhereSet) {
  const ParallelPlan p = cp_plan(4, 2, CpCommType::kAllGather);
  const nlohmann::json j = plan_to_json(p);
  EXPECT_EQ(j.at("cp"), 4);
  EXPECT_EQ(j.at("cp_comm_type"), "all_gather");
  const ParallelPlan back = plan_from_json(JsonAt(j, "plan"));
  EXPECT_EQ(back.cp, 4);
  EXPECT_EQ(back.cp_comm, CpCommType::kAllGather);
  EXPECT_FALSE(plan_to_json(ParallelPlan{}).contains("cp"));
  EXPECT_FALSE(plan_to_json(ParallelPlan{}).contains("cp_comm_type"));
  EXPECT_EQ(world_size(p), 8);
}

TEST(ContextParallel, RefusesWhatItDoesNotModelNamingTheFlag) {
  const TransformerConfig m = long_tiny();
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, cp_plan(3, 1, CpCommType::kP2p)); },
                                 {"--cp", "does not split into 2 x 3 chunks"}));
  ParallelPlan no_flash = cp_plan(2, 1, CpCommType::kP2p);
  no_flash.flash_attention = false;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, no_flash); }, {"--flash-attn"}));
  ParallelPlan eager = cp_plan(2, 1, CpCommType::kP2p);
  eager.kernels = KernelSet::kEager;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, eager); }, {"--kernels", "context parallelism"}));
  TransformerConfig moe = find_preset("tiny-moe", "");
  moe.seq = 1024;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(moe, cp_plan(2, 1, CpCommType::kP2p)); },
                                 {"--cp", "mixture-of-experts"}));
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, cp_plan(1, 1, CpCommType::kAllGather)); },
                                 {"--cp-comm-type", "with --cp 1"}));
  EXPECT_TRUE(
      throws_input_error([&] { (void)CheckedPlan(m, cp_plan(2, 1, CpCommType::kP2p), 4); }, {"--world", "x cp 2"}));
}

}  // namespace
}  // namespace commscale

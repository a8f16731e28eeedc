// Context parallelism (src/workload/CONTEXT_PARALLEL.md): the rank layout against Megatron-Core's RankGenerator
// (groups printed by its generate_masked_orthogonal_rank_groups, written out here), the step program's key-value
// exchanges counted by hand for p2p and all_gather, attention FLOPs summed over the cp ranks equal to those
// without context parallelism, gradients over dp x cp, memory, and the plans refused with their flag; with experts
// (MOE.md), each cp rank's all-to-alls and expert rows from its own tokens, the experts' gradients over
// edp = tp x cp x dp / (etp x ep) and the dense ones over dp x cp, counted by hand.

#include <gtest/gtest.h>

#include <algorithm>
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
#include "workload/layer_ops.hpp"
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
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, cp_plan(1, 1, CpCommType::kAllGather)); },
                                 {"--cp-comm-type", "with --cp 1"}));
  EXPECT_TRUE(
      throws_input_error([&] { (void)CheckedPlan(m, cp_plan(2, 1, CpCommType::kP2p), 4); }, {"--world", "x cp 2"}));
}

// ---- Context parallelism with experts (MOE.md, "Context parallelism") ----------------------------------------

// tiny-moe (8 layers, layer 0 dense: 7 MoE layers; h 128, 8 experts of F 256, top 2) at 1024 tokens.
TransformerConfig long_tiny_moe() {
  TransformerConfig m = find_preset("tiny-moe", "");
  m.seq = 1024;
  return m;
}

ParallelPlan cp_moe_plan(int cp, int dp, int ep, int tp = 1) {
  ParallelPlan p = cp_plan(cp, dp, CpCommType::kP2p);
  p.tp = tp;
  p.sequence_parallel = tp > 1;
  p.ep = ep;
  return p;
}

const WorkloadOp& named(const OpList& ops, std::string_view name) {
  const auto op = std::find_if(ops.begin(), ops.end(), [&](const WorkloadOp& o) { return o.name == name; });
  EXPECT_NE(op, ops.end()) << name;
  return *op;
}

TEST(ContextParallel, ExpertsRouteEachRanksOwnTokens) {
  // cp 2 x dp 2, ep 2, 2 microbatches of 1 sequence: each rank routes T_local = 1024 / 2 x 1 = 512 tokens.
  const TransformerConfig m = long_tiny_moe();
  const ParallelPlan p = cp_moe_plan(2, 2, 2);
  const ProgramSet set = build_program(CheckedPlan(m, p));
  const ProgramCheck check = check_program(set);
  ASSERT_TRUE(check.ok()) << check.problems.front();
  // Dispatch (or combine) all-to-all: T_local x k x h x 2 bytes = 512 x 2 x 128 x 2, sized as nccl-tests sizes it
  // (the whole send buffer); a rank keeps 1/ep of it, so T_local k h b (ep - 1) / ep leaves it.
  const std::uint64_t t_local = 1024 / 2;
  const std::uint64_t dispatch = t_local * 2 * 128 * 2;
  const OpList forward = layer_forward_ops(m, layer_sharding(p), true);
  const auto& exchange = std::get<LayerCollective>(named(forward, "dispatch.all_to_all").payload);
  EXPECT_EQ(exchange.kind, Collective::kAllToAll);
  EXPECT_EQ(exchange.group, GroupRole::kExpert);
  EXPECT_EQ(exchange.bytes.count(), dispatch);
  EXPECT_EQ(exchange.bytes.count() * traits(Collective::kAllToAll).busbw_passes * (2 - 1) / 2, t_local * 2 * 128);
  EXPECT_EQ(std::get<LayerCollective>(named(forward, "combine.all_to_all").payload).bytes.count(), dispatch);
  // The experts' rows: T_local x k over 4 local experts (8 / ep 2) = 256 rows each, F 256 (tiny-moe's gelu).
  const Gemm& fc1 = std::get<Gemm>(named(forward, "experts.fc1").payload);
  EXPECT_EQ(fc1.m, 512 * 2 / 4);
  EXPECT_EQ(fc1.n, 256);
  // Per step: 7 MoE layers x 2 microbatches x 4 all-to-alls (dispatch, combine; forward and backward).
  auto t = traffic(set, 1);
  EXPECT_EQ(t["ep alltoall"].count, 7u * 2 * 4);
  EXPECT_EQ(t["ep alltoall"].bytes.count(), 7u * 2 * 4 * dispatch);
  // The cp ring is as in a dense model: 8 layers x 2 microbatches x 3 exchanges.
  EXPECT_EQ(t["cp sendrecv"].count, 8u * 2 * 3);
  // The same bytes as a plan without cp whose sequence is the rank's 512 tokens: nothing else in the layer changes.
  TransformerConfig half = m;
  half.seq = 512;
  const ParallelPlan no_cp = cp_moe_plan(1, 2, 2);
  EXPECT_EQ(traffic(build_program(CheckedPlan(half, no_cp)), 1)["ep alltoall"].bytes.count(),
            t["ep alltoall"].bytes.count());
  EXPECT_EQ(layer_activation_bytes(half, layer_sharding(no_cp), true),
            layer_activation_bytes(m, layer_sharding(p), true));
  // Summed over the ranks, the step's FLOPs are those without cp (1 rank, ep 1: 2048 rows over 8 experts, 256 each,
  // as 1024 rows over 4 experts on each cp rank).
  const ParallelPlan one = cp_moe_plan(1, 1, 1);
  const ParallelPlan two = cp_moe_plan(2, 1, 2);
  const PlanSummary base = summarize_plan(m, one, build_program(CheckedPlan(m, one)), {}, std::nullopt);
  const PlanSummary split = summarize_plan(m, two, build_program(CheckedPlan(m, two)), {}, std::nullopt);
  EXPECT_DOUBLE_EQ(split.hardware_flops_per_step.value(), base.hardware_flops_per_step.value());
  EXPECT_DOUBLE_EQ(split.model_flops_per_step.value(), base.model_flops_per_step.value());
}

TEST(ContextParallel, ExpertsTokensSplitOverTensorRanksToo) {
  // tp 2 with sequence parallelism, cp 2, dp 2, ep 4: each tp rank routes T_local / t = 512 / 2 = 256 tokens.
  const TransformerConfig m = long_tiny_moe();
  const ParallelPlan p = cp_moe_plan(2, 2, 4, 2);
  const ProgramSet set = build_program(CheckedPlan(m, p));
  ASSERT_TRUE(check_program(set).ok());
  EXPECT_EQ(traffic(set, 0)["ep alltoall"].bytes.count(), 7u * 2 * 4 * (256 * 2 * 128 * 2));
  // Megatron-Core's layout (rank_layout_test): rank 5's ep group {4 .. 7}, edp {1, 5}; its cp group {5, 7}.
  const RankProgram& r5 = set.ranks[5];
  EXPECT_EQ(r5.groups[kExpertGroup].members, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(r5.groups[kExpertDpGroup].members, (std::vector<int>{1, 5}));
  EXPECT_EQ(r5.groups[kContextGroup].members, (std::vector<int>{5, 7}));
  EXPECT_EQ(r5.groups[kDpGroup].members, (std::vector<int>{1, 3, 5, 7}));
}

TEST(ContextParallel, ExpertGradientsReduceOverExpertDataRanksWithCp) {
  // tp 1, cp 2, dp 2, ep 2: edp = 1 x 2 x 2 / 2 = 2. Rank 1 (cp 1, dp 0): ep group {0, 1}, edp {1, 3}, cp {0, 1},
  // dense gradients over dp x cp = {0, 1, 2, 3}.
  const TransformerConfig m = long_tiny_moe();
  const ParallelPlan p = cp_moe_plan(2, 2, 2);
  EXPECT_EQ(expert_dp(p), 2);
  const ProgramSet set = build_program(CheckedPlan(m, p));
  const RankProgram& r1 = set.ranks[1];
  EXPECT_EQ(r1.groups[kExpertGroup].members, (std::vector<int>{0, 1}));
  EXPECT_EQ(r1.groups[kExpertDpGroup].members, (std::vector<int>{1, 3}));
  EXPECT_EQ(r1.groups[kContextGroup].members, (std::vector<int>{0, 1}));
  EXPECT_EQ(r1.groups[kDpGroup].members, (std::vector<int>{0, 1, 2, 3}));
  // One bucket each: the routed experts' gradients (4 local experts of 7 layers, bf16) over edp, the rest over
  // dp x cp, as many bytes as a plan of dp 4 without cp reduces (the same weights on each rank).
  auto t = traffic(set, 1);
  EXPECT_EQ(t["edp all_reduce"].count, 1u);
  EXPECT_EQ(t["edp all_reduce"].bytes.count(), 2u * 4 * 7 * expert_parameters(m));
  ParallelPlan dp4 = cp_moe_plan(1, 4, 2);
  auto d = traffic(build_program(CheckedPlan(m, dp4)), 1);
  EXPECT_EQ(t["dp all_reduce"].bytes, d["dp all_reduce"].bytes);
  EXPECT_EQ(t["edp all_reduce"].bytes, d["edp all_reduce"].bytes);
  // ZeRO 1 shards the experts' optimizer states over edp 2 and the rest over dp x cp 4: as dp 4, ep 2 (edp 2).
  ParallelPlan z = p;
  z.zero_stage = 1;
  dp4.zero_stage = 1;
  EXPECT_EQ(memory_per_stage(m, z, {})[0].bytes.optimizer, memory_per_stage(m, dp4, {})[0].bytes.optimizer);
  // ep 4 over the same ranks: edp 1, each rank the only holder of its experts.
  EXPECT_EQ(expert_dp(cp_moe_plan(2, 2, 4)), 1);
  EXPECT_EQ(build_program(CheckedPlan(m, cp_moe_plan(2, 2, 4))).ranks[1].groups[kExpertDpGroup].members,
            (std::vector<int>{1}));
}

TEST(ContextParallel, ExpertPlansAreDeadlockFree) {
  const TransformerConfig m = long_tiny_moe();
  int built = 0;
  for (const int tp : {1, 2}) {
    for (const int cp : {2, 4}) {
      for (const int dp : {1, 2}) {
        for (const int pp : {1, 2}) {
          for (const int ep : {2, 4, 8}) {
            if ((tp * cp * dp) % ep != 0) continue;
            ParallelPlan p = cp_moe_plan(cp, dp, ep, tp);
            p.pp = pp;
            p.global_batch = dp * 2 * pp;
            p.zero_stage = built % 3;
            p.cp_comm = built % 2 == 0 ? CpCommType::kP2p : CpCommType::kAllGather;
            const ProgramCheck check = check_program(build_program(CheckedPlan(m, p)));
            EXPECT_TRUE(check.ok()) << "tp " << tp << " cp " << cp << " dp " << dp << " pp " << pp << " ep " << ep
                                    << ": " << (check.ok() ? "" : check.problems.front());
            ++built;
          }
        }
      }
    }
  }
  EXPECT_EQ(built, 38);  // tp x cp x dp of 2, 4, 4, 8, 4, 8, 8, 16: 19 choices of ep, x 2 pipelines
}

TEST(ContextParallel, ExpertPlansRefuseWhatIsNotModelledNamingTheFlag) {
  const TransformerConfig m = long_tiny_moe();
  // ep divides tp x cp x dp: 4 over cp 2 x dp 2 is accepted, 8 is not, nor etp 2 x ep 4.
  EXPECT_NO_THROW((void)CheckedPlan(m, cp_moe_plan(2, 2, 4)));
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, cp_moe_plan(2, 2, 8)); },
                                 {"--ep", "8 does not divide tp 1 x cp 2 x dp 2", "tp x cp x dp"}));
  TransformerConfig no_bias = m;
  no_bias.linear_bias = false;
  ParallelPlan etp = cp_moe_plan(2, 2, 4);
  etp.etp = 2;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(no_bias, etp); }, {"--etp", "tp 1 x cp 2 x dp 2"}));
  ParallelPlan eager = cp_moe_plan(2, 2, 2);
  eager.kernels = KernelSet::kEager;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, eager); }, {"--kernels"}));
  ParallelPlan lora = cp_moe_plan(2, 2, 2);
  lora.lora.rank = 8;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, lora); }, {"--lora-rank"}));
  ParallelPlan offload = cp_moe_plan(2, 2, 2);
  offload.offload_activations = true;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, offload); }, {"--offload-activations"}));
}

}  // namespace
}  // namespace commscale
